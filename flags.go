package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"agent/internal/quote"
)

// usageError is a problem with the command line: exit 2, one line on stderr
// plus a hint to --help (docs/reference/cli.md, "Exit codes").
type usageError struct {
	cmd string // the command path, e.g. "mcp list"
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// errHelp asks the dispatcher to print the command's usage on stdout and
// exit 0.
var errHelp = fmt.Errorf("help requested")

type flagKind int

const (
	boolFlag flagKind = iota
	stringFlag
	stringsFlag
)

type flagDef struct {
	long   string
	short  string
	kind   flagKind
	value  string // name of the value in usage, e.g. FILE
	help   string
	b      *bool
	s      *string
	ss     *[]string
	set    bool
	hidden bool
}

// flagSet parses GNU-style options: --flag value, --flag=value, -x for the
// short forms, options and operands in any order, "--" ends options and a
// lone "-" is an operand.
type flagSet struct {
	cmd  string
	defs []*flagDef
}

func newFlagSet(cmd string) *flagSet { return &flagSet{cmd: cmd} }

func (f *flagSet) add(d *flagDef) *flagDef {
	f.defs = append(f.defs, d)
	return d
}

func (f *flagSet) boolVar(p *bool, long, short, help string) {
	f.add(&flagDef{long: long, short: short, kind: boolFlag, b: p, help: help})
}

func (f *flagSet) stringVar(p *string, long, value, help string) {
	f.add(&flagDef{long: long, kind: stringFlag, s: p, value: value, help: help})
}

func (f *flagSet) stringsVar(p *[]string, long, value, help string) {
	f.add(&flagDef{long: long, kind: stringsFlag, ss: p, value: value, help: help})
}

func (f *flagSet) lookup(name string, short bool) *flagDef {
	for _, d := range f.defs {
		if short && d.short != "" && d.short == name || !short && d.long == name {
			return d
		}
	}
	return nil
}

// isSet reports whether the named long flag appeared on the command line.
func (f *flagSet) isSet(long string) bool {
	d := f.lookup(long, false)
	return d != nil && d.set
}

func (f *flagSet) parse(args []string) ([]string, error) {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			operands = append(operands, a)
			continue
		}
		if a == "-h" || a == "--help" {
			return nil, errHelp
		}
		var d *flagDef
		var name, val string
		hasVal := false
		if strings.HasPrefix(a, "--") {
			name, val, hasVal = strings.Cut(a[2:], "=")
			d = f.lookup(name, false)
			name = "--" + name
		} else {
			name = a[1:]
			if len(name) != 1 {
				return nil, usagef(f.cmd, "unknown flag %s (long flags take two dashes)", quote.Cut(a))
			}
			d = f.lookup(name, true)
			name = a
		}
		if d == nil {
			return nil, usagef(f.cmd, "unknown flag %s", quote.Cut(name))
		}
		if d.kind == boolFlag {
			if hasVal {
				b, err := strconv.ParseBool(val)
				if err != nil {
					return nil, usagef(f.cmd, "flag %s takes no value or true/false, got %q", name, quote.V(val))
				}
				*d.b = b
			} else {
				*d.b = true
			}
			d.set = true
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, usagef(f.cmd, "flag %s needs a value (%s)", name, d.value)
			}
			i++
			val = args[i]
		}
		if d.set && d.kind != stringsFlag {
			return nil, usagef(f.cmd, "flag %s given more than once", name)
		}
		d.set = true
		switch d.kind {
		case stringFlag:
			*d.s = val
		case stringsFlag:
			*d.ss = append(*d.ss, val)
		}
	}
	return operands, nil
}

// usage lists the flags, sorted by name, for --help.
func (f *flagSet) usage() string {
	var defs []*flagDef
	for _, d := range f.defs {
		if !d.hidden {
			defs = append(defs, d)
		}
	}
	if len(defs) == 0 {
		return ""
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].long < defs[j].long })
	var b strings.Builder
	b.WriteString("\nFlags:\n")
	rows := make([][2]string, 0, len(defs))
	width := 0
	for _, d := range defs {
		left := "  "
		if d.short != "" {
			left += "-" + d.short + ", "
		} else {
			left += "    "
		}
		left += "--" + d.long
		if d.kind != boolFlag {
			left += " " + d.value
		}
		rows = append(rows, [2]string{left, d.help})
		width = max(width, len(left))
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s  %s\n", width, r[0], r[1])
	}
	return b.String()
}
