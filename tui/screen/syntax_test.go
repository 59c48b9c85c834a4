package screen

import (
	"strings"
	"testing"
)

func TestHighlight(t *testing.T) {
	th := &DefaultTheme
	cases := []struct {
		name       string
		lang, line string
		want       []Span
	}{
		{"Go keywords, an escaped quote and a line comment", "go", `func f() { return "x\"y" } // done`, []Span{
			{"func", th.SyntaxKeyword}, {" f() { ", th.Code}, {"return", th.SyntaxKeyword}, {" ", th.Code},
			{`"x\"y"`, th.SyntaxString}, {" } ", th.Code}, {"// done", th.SyntaxComment}}},
		{"Python keywords, a number and a hash comment", "python", "def f(x): return 42 # answer", []Span{
			{"def", th.SyntaxKeyword}, {" f(x): ", th.Code}, {"return", th.SyntaxKeyword}, {" ", th.Code},
			{"42", th.SyntaxNumber}, {" ", th.Code}, {"# answer", th.SyntaxComment}}},
		{"a block comment and a template string", "ts", "const a = /* c */ `t`", []Span{
			{"const", th.SyntaxKeyword}, {" a = ", th.Code}, {"/* c */", th.SyntaxComment}, {" ", th.Code}, {"`t`", th.SyntaxString}}},
		{"JSON strings, literals and numbers", "json", `{"k": true, "n": 1.5}`, []Span{
			{"{", th.Code}, {`"k"`, th.SyntaxString}, {": ", th.Code}, {"true", th.SyntaxKeyword}, {", ", th.Code},
			{`"n"`, th.SyntaxString}, {": ", th.Code}, {"1.5", th.SyntaxNumber}, {"}", th.Code}}},
		{"an unterminated string runs to the end of the line", "bash", `if [ -f x ]; then echo 'unterminated`, []Span{
			{"if", th.SyntaxKeyword}, {" [ -f x ]; ", th.Code}, {"then", th.SyntaxKeyword}, {" echo ", th.Code}, {"'unterminated", th.SyntaxString}}},
		{"an unknown language is plain code", "cobol", "MOVE A TO B", []Span{{"MOVE A TO B", th.Code}}},
		{"a digit inside a name is no number", "go", "x2 := 漢字", []Span{{"x2 := 漢字", th.Code}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Highlight(c.lang, c.line, th)
			if len(got) != len(c.want) {
				t.Errorf("%s %q: got %q", c.lang, c.line, got)
				return
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("%s %q: span %d = %+v, want %+v", c.lang, c.line, i, got[i], c.want[i])
				}
			}
		})
	}
}

// Highlighting applies only with Theme.Syntax; without it a block is one
// style.
func TestMarkdownSyntaxToggle(t *testing.T) {
	src := "```go\nfunc main() {}\n```\n"
	on := DefaultTheme
	on.Syntax = true
	l := Markdown(src, 40, &on)
	if len(l) != 2 || len(l[1]) < 3 || l[1][1].Style != on.SyntaxKeyword {
		t.Fatalf("highlighted: %+v", l)
	}
	off := Markdown(src, 40, &DefaultTheme)
	for _, sp := range off[1] {
		if sp.Style != DefaultTheme.Code {
			t.Fatalf("not highlighted: %+v", off)
		}
	}
}

func FuzzHighlight(f *testing.F) {
	for _, s := range []string{`x := "a\"b" // c`, "/* open", "'", "`", "#!/bin/sh", "0x1F.e3", "\xff\xfe"} {
		f.Add("go", s)
		f.Add("sh", s)
	}
	f.Fuzz(func(t *testing.T, lang, line string) {
		got := Highlight(lang, line, nil)
		var b strings.Builder
		for _, sp := range got {
			b.WriteString(sp.Text)
		}
		if b.String() != line {
			t.Fatalf("spans %q do not join to %q", got, line)
		}
	})
}
