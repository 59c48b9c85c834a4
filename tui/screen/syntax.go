package screen

import (
	"strings"
	"sync"
)

// A small hand-written highlighter for fenced code blocks (the
// theme-picker's syntax highlighting, toggled off with s;
// docs/reference/keybindings.md, "Defaults"). It works a line at a time
// with no state between lines: a string or block comment that spans lines
// is highlighted only on its first line. That is the price of keeping a
// streaming answer's layout incremental, and the text is never changed,
// only styled.

type syntaxLang struct {
	keywords     map[string]bool
	lineComment  []string // prefixes that start a comment to the end of the line
	quotes       string   // characters that open a string
	blockComment bool     // /* … */ on one line
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// The languages are made on first use (the start of every run would pay
// for their keyword sets otherwise).
var (
	langGo = sync.OnceValue(func() *syntaxLang {
		return &syntaxLang{keywords: words(`break case chan const continue default defer else fallthrough for func go goto if
		import interface map package range return select struct switch type var nil true false iota`),
			lineComment: []string{"//"}, quotes: "\"'`", blockComment: true}
	})
	langPython = sync.OnceValue(func() *syntaxLang {
		return &syntaxLang{keywords: words(`and as assert async await break class continue def del elif else except finally
		for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self`),
			lineComment: []string{"#"}, quotes: "\"'"}
	})
	langJS = sync.OnceValue(func() *syntaxLang {
		return &syntaxLang{keywords: words(`async await break case catch class const continue debugger default delete do else
		export extends finally for function if import in instanceof let new of return super switch this throw try typeof
		var void while yield null undefined true false interface type enum implements private public readonly`),
			lineComment: []string{"//"}, quotes: "\"'`", blockComment: true}
	})
	langSh = sync.OnceValue(func() *syntaxLang {
		return &syntaxLang{keywords: words(`if then else elif fi for in do done while until case esac function return
		local export readonly set unset exit shift`),
			lineComment: []string{"#"}, quotes: "\"'"}
	})
	langJSON = sync.OnceValue(func() *syntaxLang {
		return &syntaxLang{keywords: words(`true false null`), quotes: "\""}
	})
)

// syntaxFor maps a fence's info string to a language; nil when unknown.
func syntaxFor(info string) *syntaxLang {
	name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(info)), " ")
	switch name {
	case "go", "golang":
		return langGo()
	case "python", "py", "python3":
		return langPython()
	case "js", "javascript", "jsx", "mjs", "ts", "typescript", "tsx":
		return langJS()
	case "sh", "bash", "shell", "zsh", "console":
		return langSh()
	case "json", "jsonc":
		return langJSON()
	}
	return nil
}

// Highlight splits one line of code in the fence's language into styled
// spans; the spans' texts joined are exactly the line. An unknown
// language is one span in th.Code.
func Highlight(info, line string, th *Theme) []Span {
	if th == nil {
		th = &DefaultTheme
	}
	lang := syntaxFor(info)
	if lang == nil || line == "" {
		return []Span{{Text: line, Style: th.Code}}
	}
	var out []Span
	add := func(text string, st Style) {
		if text == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Style == st {
			out[n-1].Text += text
			return
		}
		out = append(out, Span{Text: text, Style: st})
	}
	i := 0
	for i < len(line) {
		rest := line[i:]
		if comment(lang, rest) {
			if lang.blockComment && strings.HasPrefix(rest, "/*") {
				end := strings.Index(rest[2:], "*/")
				if end >= 0 {
					add(rest[:end+4], th.SyntaxComment)
					i += end + 4
					continue
				}
			}
			add(rest, th.SyntaxComment)
			break
		}
		c := line[i]
		switch {
		case strings.IndexByte(lang.quotes, c) >= 0:
			j := i + 1
			for j < len(line) && line[j] != c {
				if line[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			add(line[i:j], th.SyntaxString)
			i = j
		case c >= '0' && c <= '9' && (i == 0 || !identByte(line[i-1])):
			j := i
			for j < len(line) && (identByte(line[j]) || line[j] == '.') {
				j++
			}
			add(line[i:j], th.SyntaxNumber)
			i = j
		case identByte(c):
			j := i
			for j < len(line) && identByte(line[j]) {
				j++
			}
			st := th.Code
			if lang.keywords[line[i:j]] {
				st = th.SyntaxKeyword
			}
			add(line[i:j], st)
			i = j
		default:
			// Copy up to the next byte that may start a token; multi-byte
			// runes pass through whole (their bytes are all ≥ 0x80).
			j := i + 1
			for j < len(line) && !identByte(line[j]) && strings.IndexByte(lang.quotes, line[j]) < 0 && !comment(lang, line[j:]) {
				j++
			}
			add(line[i:j], th.Code)
			i = j
		}
	}
	return out
}

func comment(lang *syntaxLang, s string) bool {
	for _, p := range lang.lineComment {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return lang.blockComment && strings.HasPrefix(s, "/*")
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
