package redact

import (
	"strings"
	"testing"
)

func TestURLMasksWhatMayCarryACredential(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain URL unchanged", "https://api.example.com/v1/chat/completions", "https://api.example.com/v1/chat/completions"},
		{"query values", "http://127.0.0.1:1/v1/chat/completions?key=SECRET&alt=sse", "http://127.0.0.1:1/v1/chat/completions?key=***&alt=***"},
		{"query without a value", "http://h/v1?SECRET", "http://h/v1?***"},
		{"empty query", "http://h/v1?", "http://h/v1?"},
		{"credential-shaped segment", "http://h/v1/key-SECRET123/chat/completions", "http://h/v1/***/chat/completions"},
		{"value after a credential name", "http://h/api-key/SECRET123/v1", "http://h/***/***/v1"},
		{"token segment", "http://h/token/abc/v1", "http://h/***/***/v1"},
		{"escaped segment", "http://h/v1/api%5Fkey%3DS/x", "http://h/v1/***/x"},
		{"escaped name before its value", "http://h/v1/api%5Fkey/S/x", "http://h/v1/***/***/x"},
		{"key-like segment", "http://h/v1/sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z/chat", "http://h/v1/***/chat"},
		{"model names stay", "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent", "http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent"},
		{"user information", "https://user:pw@h/v1", "https://***@h/v1"},
		{"fragment", "http://h/v1#tok", "http://h/v1#***"},
		{"not a URL", "/v1/key-SECRET?key=SECRET", "/v1/***?key=***"},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := URL(c.in); got != c.want {
				t.Fatalf("URL(%q) = %q, want %q", c.in, got, c.want)
			}
			if again := URL(c.want); again != c.want {
				t.Fatalf("masking twice changed %q to %q", c.want, again)
			}
		})
	}
}

func TestTextMasksTheURLWhereQuoted(t *testing.T) {
	raw := "http://h/v1/chat/completions?key=SECRET"
	got := Text(`Post "`+raw+`": connection refused`, raw)
	if got != `Post "http://h/v1/chat/completions?key=***": connection refused` {
		t.Fatalf("Text = %q", got)
	}
	if got := Text("no URL here", raw); got != "no URL here" {
		t.Fatalf("Text = %q", got)
	}
}

func TestIsCredentialName(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want bool
	}{
		{"a segment that is a credential word", "API_KEY", true},
		{"a credential word after a prefix", "GITHUB_TOKEN", true},
		{"case and dashes are ignored", "x-api-key", true},
		{"a segment ending in a credential word", "MYAPIKEY", true},
		{"the URL of a database", "DATABASE_URL", true},
		{"the URI of a cache", "REDIS_URI", true},
		{"a cookie", "SESSION_COOKIE", true},
		{"PWD is the working directory", "PWD", false},
		{"OLDPWD is the previous directory", "OLDPWD", false},
		{"no credential word", "HOME", false},
		{"a URL that names no store", "HOMEPAGE_URL", false},
		{"a credential word at the start of a segment", "KEYBOARD", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := IsCredentialName(c.in); got != c.want {
				t.Errorf("IsCredentialName(%q) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

// URL reads outside text (a flag, a settings value, an error message):
// whatever it gets, it returns, and a second pass changes nothing.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:1/v1?key=SECRET", "http://h/api-key/S/v1#x", "https://u:p@h/v1/key-S?a&b=c", "/%zz/key", "?", "#", "://@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := URL(s)
		if URL(m) != m {
			t.Fatalf("not stable: %q -> %q -> %q", s, m, URL(m))
		}
		// Every query value of the result is the mask.
		if _, q, ok := strings.Cut(strings.SplitN(m, "#", 2)[0], "?"); ok {
			for p := range strings.SplitSeq(q, "&") {
				if _, v, ok := strings.Cut(p, "="); p != "" && (ok && v != Mask || !ok && p != Mask) {
					t.Fatalf("query part %q survives in %q", p, m)
				}
			}
		}
	})
}
