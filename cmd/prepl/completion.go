package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Shell completion and the man page are made from the commands' own flag
// sets and help texts (commandFlags), so they cannot drift from them.

func runCompletion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl completion bash|zsh

Writes a completion script for the shell: commands and each command's flags.
  bash: source <(prepl completion bash)    (or save it in /etc/bash_completion.d/prepl)
  zsh:  prepl completion zsh > "${fpath[1]}/_prepl"; then compinit

Flags:
`)
		printFlags(fs)
	}
	if introspecting(fs, args) {
		return errIntrospect
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: give the shell: bash or zsh", errUsage)
	}
	switch fs.Arg(0) {
	case "bash":
		return bashCompletion(stdout)
	case "zsh":
		return zshCompletion(stdout)
	}
	return fmt.Errorf("%w: shell %q: want bash or zsh", errUsage, fs.Arg(0))
}

// flagNames lists a command's flags, sorted.
func flagNames(c command) []*flag.Flag {
	fs := commandFlags(c)
	if fs == nil {
		return nil
	}
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func bashCompletion(w io.Writer) error {
	var b bytes.Buffer
	var names []string
	for _, c := range allCommands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(&b, `# bash completion for prepl (prepl completion bash)
_prepl() {
    local cur="${COMP_WORDS[COMP_CWORD]}" cmd="${COMP_WORDS[1]}" opts=""
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "%s --help --version" -- "$cur"))
        return
    fi
    case "$cmd" in
`, strings.Join(names, " "))
	for _, c := range allCommands() {
		var opts []string
		for _, f := range flagNames(c) {
			opts = append(opts, "--"+f.Name)
		}
		opts = append(opts, "--help")
		fmt.Fprintf(&b, "        %s) opts=%q ;;\n", c.name, strings.Join(opts, " "))
	}
	fmt.Fprint(&b, `    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o default -F _prepl prepl
`)
	_, err := w.Write(b.Bytes())
	return err
}

// zshQuote makes s safe inside a single-quoted _arguments spec.
func zshQuote(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	r := strings.NewReplacer("'", "'\\''", "[", "\\[", "]", "\\]", ":", "\\:")
	return r.Replace(s)
}

func zshCompletion(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprint(&b, "#compdef prepl\n# zsh completion for prepl (prepl completion zsh)\n_prepl() {\n    local -a commands\n    commands=(\n")
	for _, c := range allCommands() {
		fmt.Fprintf(&b, "        '%s:%s'\n", c.name, zshQuote(c.summary))
	}
	fmt.Fprint(&b, "    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' commands\n        return\n    fi\n    case $words[2] in\n")
	for _, c := range allCommands() {
		fmt.Fprintf(&b, "        %s)\n            _arguments \\\n", c.name)
		for _, f := range flagNames(c) {
			switch t := flagType(f); t {
			case "bool":
				fmt.Fprintf(&b, "                '--%s[%s]' \\\n", f.Name, zshQuote(f.Usage))
			case "list":
				fmt.Fprintf(&b, "                '*--%s=[%s]:value:' \\\n", f.Name, zshQuote(f.Usage))
			default:
				action := ""
				if strings.Contains(f.Name, "file") || f.Name == "config" || strings.HasSuffix(f.Name, "-ca") ||
					strings.HasSuffix(f.Name, "-cert") || strings.HasSuffix(f.Name, "-key") {
					action = "_files"
				}
				fmt.Fprintf(&b, "                '--%s=[%s]:%s:%s' \\\n", f.Name, zshQuote(f.Usage), t, action)
			}
		}
		fmt.Fprint(&b, "                '(- *)--help[show the help]' \\\n                '*:file:_files'\n            ;;\n")
	}
	fmt.Fprint(&b, "    esac\n}\n_prepl \"$@\"\n")
	_, err := w.Write(b.Bytes())
	return err
}

func runMan(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("man", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: prepl man > prepl.1\n\nWrites prepl's man page (roff), made from the commands' help. make man writes docs/prepl.1.\n\nFlags:\n")
		printFlags(fs)
	}
	if introspecting(fs, args) {
		return errIntrospect
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	_, err := io.WriteString(stdout, manPage(time.Now()))
	return err
}

// roff escapes text for a man page.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			l = `\&` + l
		}
		out = append(out, strings.ReplaceAll(l, "-", `\-`))
	}
	return strings.Join(out, "\n")
}

// commandHelp is a command's help text (its --help output).
func commandHelp(c command) string {
	fs := commandFlags(c)
	if fs == nil || fs.Usage == nil {
		return ""
	}
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.Usage()
	return b.String()
}

func manPage(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH PREPL 1 %q \"prepl %s\" \"User Commands\"\n", now.Format("2006-01"), version)
	fmt.Fprint(&b, ".SH NAME\nprepl \\- apply a MySQL/MariaDB row\\-based binlog to a target in parallel\n")
	fmt.Fprint(&b, ".SH SYNOPSIS\n.B prepl\n.I COMMAND\n[\\fIFLAGS\\fR] [\\fIARGS\\fR]\n")
	var u bytes.Buffer
	usage(&u)
	fmt.Fprintf(&b, ".SH DESCRIPTION\n.nf\n%s\n.fi\n", roff(strings.TrimSpace(u.String())))
	fmt.Fprint(&b, ".SH COMMANDS\n")
	for _, c := range allCommands() {
		fmt.Fprintf(&b, ".SS %s\n%s\n.PP\n.nf\n%s\n.fi\n", c.name, roff(c.summary), roff(strings.TrimRight(commandHelp(c), "\n")))
	}
	fmt.Fprint(&b, ".SH EXIT STATUS\n0 done or stopped on a signal; 1 a fault a restart may fix; 2 a mistake a restart cannot fix (usage, config,\ndamaged binlog, diverged target). prepl status: 0 OK, 1 WARNING, 2 CRITICAL.\n")
	fmt.Fprint(&b, ".SH SEE ALSO\nmariadb\\-binlog(1), mysqlbinlog(1), README.md and docs/ of the prepl repository.\n")
	return b.String()
}
