package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestFlagParsing: the GNU-style rules of flags.go, one row per rule.
func TestFlagParsing(t *testing.T) {
	type parsed struct {
		print    bool
		model    string
		grants   []string
		operands []string
	}
	cases := []struct {
		name string
		args []string
		want parsed
		err  string // "" for success; else a part of the usage error
	}{
		{"a long flag takes the next word", []string{"--model", "m1"}, parsed{model: "m1"}, ""},
		{"a long flag takes =value", []string{"--model=m1"}, parsed{model: "m1"}, ""},
		{"=value may be empty", []string{"--model="}, parsed{}, ""},
		{"a value may start with a dash", []string{"--model", "-x"}, parsed{model: "-x"}, ""},
		{"a short bool flag", []string{"-p", "hi"}, parsed{print: true, operands: []string{"hi"}}, ""},
		{"a long bool flag", []string{"--print"}, parsed{print: true}, ""},
		{"a bool flag takes =false", []string{"--print=false"}, parsed{}, ""},
		{"flags and operands in any order", []string{"hi", "-p", "--model", "m"}, parsed{print: true, model: "m", operands: []string{"hi"}}, ""},
		{"-- ends the flags", []string{"--", "-p", "--model"}, parsed{operands: []string{"-p", "--model"}}, ""},
		{"a lone dash is an operand", []string{"-"}, parsed{operands: []string{"-"}}, ""},
		{"a repeatable flag collects its values", []string{"--external-event-grant", "a", "--external-event-grant=b"}, parsed{grants: []string{"a", "b"}}, ""},
		{"an unknown long flag", []string{"--nope"}, parsed{}, "unknown flag --nope"},
		{"an unknown short flag", []string{"-z"}, parsed{}, "unknown flag -z"},
		{"a long flag with one dash", []string{"-model", "m"}, parsed{}, "long flags take two dashes"},
		{"a missing value", []string{"--model"}, parsed{}, "needs a value (SLUG)"},
		{"a flag given twice", []string{"--model", "a", "--model", "b"}, parsed{}, "given more than once"},
		{"a bool flag with a value that is not one", []string{"--print=maybe"}, parsed{}, "takes no value or true/false"},
		{"a long unknown flag is cut in the message", []string{"--" + strings.Repeat("x", 500)}, parsed{}, "… (502 bytes)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sf := &sessionFlags{}
			f := newFlagSet("")
			sf.registerRoot(f)
			ops, err := f.parse(c.args)
			if c.err != "" {
				var ue *usageError
				if !errors.As(err, &ue) || !strings.Contains(ue.msg, c.err) {
					t.Fatalf("error %v, want a usage error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := parsed{print: sf.print, model: sf.model, grants: sf.eventGrants, operands: ops}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("parsed %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestFlagHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"--model", "m", "--help"}} {
		f := newFlagSet("")
		(&sessionFlags{}).registerRoot(f)
		if _, err := f.parse(args); !errors.Is(err, errHelp) {
			t.Errorf("%v: %v, want the help", args, err)
		}
	}
	f := newFlagSet("")
	(&sessionFlags{}).registerRoot(f)
	if _, err := f.parse([]string{"--", "--help"}); err != nil {
		t.Errorf("--help after --: %v", err)
	}
}
