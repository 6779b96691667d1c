package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"
)

// Shell completion and the man page are made from the commands' own flag
// sets and help texts (CommandFlags), so they cannot drift from them.

// Completion is the completion command: prepl completion bash|zsh.
func Completion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl completion bash|zsh

Writes a completion script for the shell: commands and each command's flags.
  bash: source <(prepl completion bash)    (or save it in /etc/bash_completion.d/prepl)
  zsh:  prepl completion zsh > "${fpath[1]}/_prepl"; then compinit

Flags:
`)
		PrintFlags(fs)
	}
	if Introspecting(fs, args) {
		return ErrIntrospect
	}
	if err := ParseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: give the shell: bash or zsh", ErrUsage)
	}
	switch fs.Arg(0) {
	case "bash":
		return Bash(stdout)
	case "zsh":
		return Zsh(stdout)
	}
	return fmt.Errorf("%w: shell %q: want bash or zsh", ErrUsage, fs.Arg(0))
}

// ManCommand is the man command of prepl at version, whose description is
// usage's text.
func ManCommand(version string, usage func(io.Writer)) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(_ context.Context, args []string, stdout, stderr io.Writer) error {
		fs := flag.NewFlagSet("man", flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.Usage = func() {
			fmt.Fprint(fs.Output(), "Usage: prepl man > prepl.1\n\nWrites prepl's man page (roff), made from the commands' help. make man writes docs/prepl.1.\n\nFlags:\n")
			PrintFlags(fs)
		}
		if Introspecting(fs, args) {
			return ErrIntrospect
		}
		if err := ParseArgs(fs, args); err != nil {
			return err
		}
		_, err := io.WriteString(stdout, ManPage(time.Now(), version, usage))
		return err
	}
}

// VersionCommand is the version command of prepl at version.
func VersionCommand(version string) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(_ context.Context, args []string, stdout, _ io.Writer) error {
		fs := flag.NewFlagSet("version", flag.ContinueOnError)
		fs.Usage = func() { fmt.Fprintln(fs.Output(), "Usage: prepl version\n\nPrints prepl's version.") }
		if Introspecting(fs, args) {
			return ErrIntrospect
		}
		if err := ParseArgs(fs, args); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "prepl %s\n", version)
		return nil
	}
}
