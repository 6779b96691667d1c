package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// flagNames lists a command's flags, sorted.
func flagNames(c Command) []*flag.Flag {
	fs := CommandFlags(c)
	if fs == nil {
		return nil
	}
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Bash writes a bash completion script: the commands and each one's flags.
func Bash(w io.Writer) error {
	var b bytes.Buffer
	var names []string
	for _, c := range commands() {
		names = append(names, c.Name)
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
	for _, c := range commands() {
		var opts []string
		for _, f := range flagNames(c) {
			opts = append(opts, "--"+f.Name)
		}
		opts = append(opts, "--help")
		fmt.Fprintf(&b, "        %s) opts=%q ;;\n", c.Name, strings.Join(opts, " "))
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

// Zsh writes a zsh completion script.
func Zsh(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprint(&b, "#compdef prepl\n# zsh completion for prepl (prepl completion zsh)\n_prepl() {\n    local -a commands\n    commands=(\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "        '%s:%s'\n", c.Name, zshQuote(c.Summary))
	}
	fmt.Fprint(&b, "    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' commands\n        return\n    fi\n    case $words[2] in\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "        %s)\n            _arguments \\\n", c.Name)
		for _, f := range flagNames(c) {
			switch t := FlagType(f); t {
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

// CommandHelp is a command's help text (its --help output).
func CommandHelp(c Command) string {
	fs := CommandFlags(c)
	if fs == nil || fs.Usage == nil {
		return ""
	}
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.Usage()
	return b.String()
}

// ManPage is the man page (roff) of prepl at version, its description usage's
// text, each command's section its help.
func ManPage(now time.Time, version string, usage func(io.Writer)) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH PREPL 1 %q \"prepl %s\" \"User Commands\"\n", now.Format("2006-01"), version)
	fmt.Fprint(&b, ".SH NAME\nprepl \\- apply a MySQL/MariaDB row\\-based binlog to a target in parallel\n")
	fmt.Fprint(&b, ".SH SYNOPSIS\n.B prepl\n.I COMMAND\n[\\fIFLAGS\\fR] [\\fIARGS\\fR]\n")
	var u bytes.Buffer
	usage(&u)
	fmt.Fprintf(&b, ".SH DESCRIPTION\n.nf\n%s\n.fi\n", roff(strings.TrimSpace(u.String())))
	fmt.Fprint(&b, ".SH COMMANDS\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, ".SS %s\n%s\n.PP\n.nf\n%s\n.fi\n", c.Name, roff(c.Summary), roff(strings.TrimRight(CommandHelp(c), "\n")))
	}
	fmt.Fprint(&b, ".SH EXIT STATUS\n0 done or stopped on a signal; 1 a fault a restart may fix; 2 a mistake a restart cannot fix (usage, config,\ndamaged binlog, diverged target). prepl status: 0 OK, 1 WARNING, 2 CRITICAL.\n")
	fmt.Fprint(&b, ".SH SEE ALSO\nmariadb\\-binlog(1), mysqlbinlog(1), README.md and docs/ of the prepl repository.\n")
	return b.String()
}
