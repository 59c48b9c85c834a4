package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"agent/internal/quote"
	"agent/internal/securefile"
	"agent/internal/strictjson"
	"agent/tui/screen"
)

// uiTheme is the styles of the UI chrome and of the laid-out text.
type uiTheme struct {
	name                                                       string
	user, dim, notice, err, toolName, status, selected, prompt screen.Style
	title                                                      screen.Style
	md                                                         screen.Theme
}

// The built-in themes (the theme-picker context; docs/reference/cli.md,
// "Files": tui.json). NO_COLOR is applied by the renderer on top of any of
// them (colours dropped, attributes kept), so it is respected whatever
// theme is chosen.
var themes = []uiTheme{
	{
		name: "default",
		user: screen.Style{Attr: screen.Bold}, dim: screen.Style{Attr: screen.Dim},
		notice: screen.Style{FG: screen.Yellow}, err: screen.Style{FG: screen.Red},
		toolName: screen.Style{FG: screen.Cyan, Attr: screen.Bold}, status: screen.Style{Attr: screen.Reverse},
		selected: screen.Style{Attr: screen.Reverse | screen.Bold}, prompt: screen.Style{FG: screen.Cyan, Attr: screen.Bold},
		title: screen.Style{FG: screen.Yellow, Attr: screen.Bold},
		md:    screen.DefaultTheme,
	},
	{
		// For light backgrounds: no yellow or bright cyan, which wash out.
		name: "light",
		user: screen.Style{FG: screen.Black, Attr: screen.Bold}, dim: screen.Style{FG: screen.BrightBlack},
		notice: screen.Style{FG: screen.Magenta}, err: screen.Style{FG: screen.Red, Attr: screen.Bold},
		toolName: screen.Style{FG: screen.Blue, Attr: screen.Bold}, status: screen.Style{FG: screen.White, BG: screen.Blue},
		selected: screen.Style{Attr: screen.Reverse | screen.Bold}, prompt: screen.Style{FG: screen.Blue, Attr: screen.Bold},
		title: screen.Style{FG: screen.Magenta, Attr: screen.Bold},
		md: screen.Theme{
			Dim: screen.Style{FG: screen.BrightBlack}, Heading: screen.Style{FG: screen.Blue, Attr: screen.Bold},
			Code: screen.Style{FG: screen.Magenta}, CodeFence: screen.Style{FG: screen.BrightBlack},
			Bullet: screen.Style{FG: screen.Blue}, Quote: screen.Style{FG: screen.BrightBlack, Attr: screen.Italic},
			Bold: screen.Style{Attr: screen.Bold}, DiffAdd: screen.Style{FG: screen.Green}, DiffRemove: screen.Style{FG: screen.Red},
			DiffHunk: screen.Style{FG: screen.Blue}, DiffHeader: screen.Style{Attr: screen.Bold},
			SyntaxKeyword: screen.Style{FG: screen.Blue, Attr: screen.Bold}, SyntaxString: screen.Style{FG: screen.Green},
			SyntaxComment: screen.Style{FG: screen.BrightBlack, Attr: screen.Italic}, SyntaxNumber: screen.Style{FG: screen.Magenta},
		},
	},
	{
		// Bright colours and bold only: no dim text, which some terminals
		// render unreadably.
		name: "high-contrast",
		user: screen.Style{FG: screen.BrightWhite, Attr: screen.Bold}, dim: screen.Style{FG: screen.BrightWhite},
		notice: screen.Style{FG: screen.BrightYellow, Attr: screen.Bold}, err: screen.Style{FG: screen.BrightRed, Attr: screen.Bold},
		toolName: screen.Style{FG: screen.BrightCyan, Attr: screen.Bold | screen.Underline}, status: screen.Style{FG: screen.Black, BG: screen.BrightWhite, Attr: screen.Bold},
		selected: screen.Style{FG: screen.Black, BG: screen.BrightYellow, Attr: screen.Bold}, prompt: screen.Style{FG: screen.BrightCyan, Attr: screen.Bold},
		title: screen.Style{FG: screen.BrightYellow, Attr: screen.Bold | screen.Underline},
		md: screen.Theme{
			Text: screen.Style{FG: screen.BrightWhite}, Dim: screen.Style{FG: screen.BrightWhite},
			Heading: screen.Style{FG: screen.BrightCyan, Attr: screen.Bold | screen.Underline},
			Code:    screen.Style{FG: screen.BrightYellow}, CodeFence: screen.Style{FG: screen.BrightWhite},
			Bullet: screen.Style{FG: screen.BrightCyan, Attr: screen.Bold}, Quote: screen.Style{FG: screen.BrightWhite, Attr: screen.Italic},
			Bold: screen.Style{Attr: screen.Bold}, DiffAdd: screen.Style{FG: screen.BrightGreen, Attr: screen.Bold},
			DiffRemove: screen.Style{FG: screen.BrightRed, Attr: screen.Bold}, DiffHunk: screen.Style{FG: screen.BrightCyan},
			DiffHeader:    screen.Style{Attr: screen.Bold},
			SyntaxKeyword: screen.Style{FG: screen.BrightMagenta, Attr: screen.Bold}, SyntaxString: screen.Style{FG: screen.BrightGreen},
			SyntaxComment: screen.Style{FG: screen.BrightWhite, Attr: screen.Italic}, SyntaxNumber: screen.Style{FG: screen.BrightCyan},
		},
	},
}

func themeNamed(name string) (uiTheme, bool) {
	for _, t := range themes {
		if t.name == name {
			return t, true
		}
	}
	return themes[0], false
}

// UISettings are the terminal UI's own settings, kept in ~/.agent/tui.json
// (docs/reference/cli.md, "Files"). The zero value is the default: the
// default theme, syntax highlighting on, motion on.
type UISettings struct {
	Theme         string `json:"theme,omitempty"`
	NoSyntax      bool   `json:"noSyntax,omitempty"`
	ReducedMotion bool   `json:"reducedMotion,omitempty"`
}

// maxUISettings bounds the file read.
const maxUISettings = 64 << 10

// UISettingsPath is where the UI settings live.
func UISettingsPath(home string) string { return filepath.Join(home, ".agent", "tui.json") }

// ErrBadUISettings is wrapped when tui.json exists but cannot be used.
var ErrBadUISettings = errors.New("invalid UI settings")

// ParseUISettings decodes tui.json strictly: unknown keys, duplicate keys,
// trailing data and an unknown theme are errors.
func ParseUISettings(data []byte) (UISettings, error) {
	var u UISettings
	if err := strictjson.Unmarshal(data, &u, strictjson.Options{MaxBytes: maxUISettings}); err != nil {
		return UISettings{}, fmt.Errorf("%w: %v", ErrBadUISettings, err)
	}
	if _, ok := themeNamed(u.Theme); !ok && u.Theme != "" {
		return UISettings{}, fmt.Errorf("%w: unknown theme %q (default, light, high-contrast)", ErrBadUISettings, quote.V(u.Theme))
	}
	return u, nil
}

// LoadUISettings reads tui.json. A missing file is the defaults; a bad
// one is the defaults and an error for a notice.
func LoadUISettings(home string) (UISettings, error) {
	path := UISettingsPath(home)
	b, err := securefile.ReadFile(path, maxUISettings)
	if errors.Is(err, os.ErrNotExist) {
		return UISettings{}, nil
	}
	if err != nil {
		return UISettings{}, fmt.Errorf("%s: %w", path, err)
	}
	u, err := ParseUISettings(b)
	if err != nil {
		return UISettings{}, fmt.Errorf("%s: %w; the defaults apply", path, err)
	}
	return u, nil
}

// SaveUISettings writes tui.json atomically with mode 0600.
func SaveUISettings(home string, u UISettings) error {
	path := UISettingsPath(home)
	if err := securefile.EnsureDir(filepath.Dir(path)); err != nil {
		return err
	}
	b, err := json.MarshalIndent(u, "", "  ")
	if err != nil {
		return err
	}
	return securefile.WriteFile(path, append(b, '\n'))
}

// applyUI sets the theme and toggles; cached layouts are redone.
func (s *state) applyUI(u UISettings) {
	s.ui = u
	s.th, _ = themeNamed(u.Theme)
	s.th.md.Syntax = !u.NoSyntax
	for _, e := range s.entries {
		e.changed()
		e.stableW = -1
	}
	s.dirty = true
}
