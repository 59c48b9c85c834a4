package tui

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseUISettings(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want UISettings
		bad  bool
	}{
		{"an empty object is the defaults", `{}`, UISettings{}, false},
		{"every setting", `{"theme": "light", "noSyntax": true, "reducedMotion": true}`, UISettings{Theme: "light", NoSyntax: true, ReducedMotion: true}, false},
		{"an unknown theme", `{"theme": "neon"}`, UISettings{}, true},
		{"a duplicate key", `{"theme": "light", "theme": "default"}`, UISettings{}, true},
		{"an unknown key", `{"colour": "red"}`, UISettings{}, true},
		{"data after the object", `{} {}`, UISettings{}, true},
		{"a root that is not an object", `[]`, UISettings{}, true},
		{"a switch that is not a bool", `{"noSyntax": "yes"}`, UISettings{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseUISettings([]byte(c.in))
			if c.bad != (err != nil) || got != c.want {
				t.Errorf("%s: %+v, %v", c.in, got, err)
			}
			if err != nil && !errors.Is(err, ErrBadUISettings) {
				t.Errorf("%s: %v does not wrap ErrBadUISettings", c.in, err)
			}
		})
	}
}

func TestUISettingsFile(t *testing.T) {
	home := t.TempDir()
	if u, err := LoadUISettings(home); err != nil || u != (UISettings{}) {
		t.Fatalf("missing file: %+v %v", u, err)
	}
	want := UISettings{Theme: "high-contrast", ReducedMotion: true}
	if err := SaveUISettings(home, want); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(UISettingsPath(home))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	if u, err := LoadUISettings(home); err != nil || u != want {
		t.Fatalf("read back %+v %v", u, err)
	}
	os.WriteFile(filepath.Join(home, ".agent", "tui.json"), []byte(`{"theme": 1`), 0o600)
	u, err := LoadUISettings(home)
	if err == nil || u != (UISettings{}) {
		t.Fatalf("bad file: %+v %v", u, err)
	}
}

func FuzzParseUISettings(f *testing.F) {
	for _, s := range []string{`{}`, `{"theme":"light"}`, `{"noSyntax":true,"reducedMotion":false}`, `{"theme":"\u0000"}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := ParseUISettings(b)
		if err != nil {
			if u != (UISettings{}) {
				t.Fatalf("error with settings %+v", u)
			}
			return
		}
		if _, ok := themeNamed(u.Theme); !ok && u.Theme != "" {
			t.Fatalf("accepted theme %q", u.Theme)
		}
	})
}
