package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

// ParseFlags registers --config on fs, parses args, then sets every flag
// the command line left alone from the config file, if one is given. Every
// flag is a key (its name, without dashes); keys at the top of the file
// apply to every command and keys under [COMMAND] to that one, overriding
// the top. The command line overrides both.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	path := fs.String("config", "", "TOML file of flag values: one KEY = VALUE per flag, the flag's name as key;\n"+
		"keys at the top apply to every command, keys under [COMMAND] to that command; the command line wins")
	if Introspecting(fs, args) {
		return ErrIntrospect
	}
	if err := ParseArgs(fs, args); err != nil {
		return err // flag.ErrHelp, or wraps ErrUsage
	}
	if *path == "" {
		return nil
	}
	return loadConfig(fs, *path)
}

// ParseFlagsOnly is ParseFlags for a command that takes flags and no
// other arguments.
func ParseFlagsOnly(fs *flag.FlagSet, args []string) error {
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	return nil
}

// loadConfig applies a TOML config file to fs (see ParseFlags).
func loadConfig(fs *flag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: --config: %v", ErrUsage, err)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return fmt.Errorf("%w: config %s:%d:%d: %v", ErrUsage, path, row, col, de)
		}
		return fmt.Errorf("%w: config %s: %v", ErrUsage, path, err)
	}
	cmd := fs.Name()
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })

	values := map[string]any{}
	var where = map[string]string{} // key -> "" (top) or "[cmd]", for messages
	for _, k := range SortedKeys(doc) {
		v := doc[k]
		if table, ok := v.(map[string]any); ok {
			if !slices.Contains(commandNames(), k) {
				return fmt.Errorf("%w: config %s: unknown table [%s]: tables are named after commands (%s)",
					ErrUsage, path, k, strings.Join(commandNames(), ", "))
			}
			if k != cmd {
				continue
			}
			for _, kk := range SortedKeys(table) {
				values[kk], where[kk] = table[kk], "["+k+"] "
			}
			continue
		}
		if _, set := where[k]; !set {
			values[k], where[k] = v, ""
		}
	}
	for _, k := range SortedKeys(values) {
		f := fs.Lookup(k)
		switch {
		case k == "config":
			return fmt.Errorf("%w: config %s: %skey \"config\": a config file cannot name another one", ErrUsage, path, where[k])
		case f == nil && where[k] == "" && knownFlag(k):
			// A top-level key applies to the commands that have that
			// flag; the others ignore it.
			continue
		case f == nil:
			hint := ""
			if where[k] == "" {
				hint = "; keys for one command go under [COMMAND]"
			}
			return fmt.Errorf("%w: config %s: unknown key %q: prepl %s has no --%s flag (see prepl %s --help)%s",
				ErrUsage, path, where[k]+k, cmd, k, cmd, hint)
		case onCommandLine[k]:
			continue
		}
		if err := setFlag(f, values[k]); err != nil {
			return fmt.Errorf("%w: config %s: key %q = %s: want a %s (as --%s takes): %v", ErrUsage, path, where[k]+k,
				tomlShow(values[k]), typeWanted(f), k, err)
		}
	}
	return nil
}

// setFlag sets a flag from a TOML value. An array sets a repeatable flag
// once per element.
func setFlag(f *flag.Flag, v any) error {
	if list, ok := v.([]any); ok {
		if _, repeatable := f.Value.(*Multi); !repeatable {
			return fmt.Errorf("--%s takes one value, not a list", f.Name)
		}
		for _, e := range list {
			if err := setFlag(f, e); err != nil {
				return err
			}
		}
		return nil
	}
	s, err := tomlString(v)
	if err != nil {
		return err
	}
	if err := f.Value.Set(s); err != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if _, isDuration := g.Get().(time.Duration); isDuration {
				return fmt.Errorf("%v (durations are strings such as \"10s\" or \"5m\")", err)
			}
		}
		return err
	}
	return nil
}

// tomlString renders a TOML scalar as a flag would be given it.
func tomlString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano), nil
	case toml.LocalDateTime:
		return x.AsTime(time.UTC).Format("2006-01-02 15:04:05"), nil
	case toml.LocalDate:
		return x.String(), nil
	case toml.LocalTime:
		return x.String(), nil
	}
	return "", fmt.Errorf("unsupported value %v (%T)", v, v)
}

func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// knownFlags are the flags of every command, for a top-level config key
// that a command lacks: known elsewhere, it is ignored, else an error.
var knownFlags map[string]bool

func knownFlag(name string) bool {
	if knownFlags == nil {
		knownFlags = map[string]bool{}
		for _, c := range commands() {
			if fs := CommandFlags(c); fs != nil {
				fs.VisitAll(func(f *flag.Flag) { knownFlags[f.Name] = true })
			}
		}
	}
	return knownFlags[name]
}

// typeWanted says what a config value for f must be.
func typeWanted(f *flag.Flag) string {
	switch t := FlagType(f); t {
	case "duration":
		return "duration string such as \"10s\""
	case "list":
		return "string or array of strings"
	case "bool":
		return "boolean (true or false)"
	case "int", "uint":
		return "whole number"
	case "float":
		return "number"
	default:
		return t
	}
}

// tomlShow renders a config value for a message.
func tomlShow(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v", v)
}

func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.Name)
	}
	return out
}
