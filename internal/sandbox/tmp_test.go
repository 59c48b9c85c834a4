package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// newTmpBox makes a box of ID id in home, without starting anything.
func newTmpBox(t *testing.T, home, id string) *Box {
	t.Helper()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	b, err := New(Options{Home: home, Workspace: ws, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return names
}

// TestTmpSpares: a closed box leaves its private folder emptied as a
// spare, which the next box takes as its own (empty, mode 0700); what
// cannot be a spare is never taken as one.
func TestTmpSpares(t *testing.T) {
	t.Run("emptied, left and taken", func(t *testing.T) {
		home := t.TempDir()
		a := newTmpBox(t, home, "a")
		os.WriteFile(filepath.Join(a.TmpDir(), "f"), []byte("secret"), 0o600)
		os.MkdirAll(filepath.Join(a.TmpDir(), "d", "e"), 0o755)
		os.Chmod(a.TmpDir(), 0o777)
		a.Close()
		tmpRoot := filepath.Dir(a.TmpDir())
		if got := entries(t, tmpRoot); len(got) != 1 || got[0] != ".spare-0" {
			t.Fatalf("after Close: %q", got)
		}
		if got := entries(t, filepath.Join(tmpRoot, ".spare-0")); len(got) != 0 {
			t.Fatalf("the spare holds %q", got)
		}
		b := newTmpBox(t, home, "b")
		defer b.Close()
		fi, err := os.Lstat(b.TmpDir())
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || len(entries(t, b.TmpDir())) != 0 {
			t.Fatalf("the new box's folder: %v %v", fi, err)
		}
		if got := entries(t, tmpRoot); len(got) != 1 || got[0] != "b" {
			t.Fatalf("after the second New: %q", got)
		}
	})
	t.Run("at most a few spares", func(t *testing.T) {
		home := t.TempDir()
		var boxes []*Box
		for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
			boxes = append(boxes, newTmpBox(t, home, id))
		}
		for _, b := range boxes {
			b.Close()
		}
		if got := entries(t, filepath.Dir(boxes[0].TmpDir())); len(got) != spares {
			t.Fatalf("%d boxes closed left %q", len(boxes), got)
		}
	})
	t.Run("a folder that cannot be emptied is removed", func(t *testing.T) {
		home := t.TempDir()
		a := newTmpBox(t, home, "a")
		ro := filepath.Join(a.TmpDir(), "ro")
		os.MkdirAll(filepath.Join(ro, "x"), 0o755)
		os.Chmod(ro, 0o555)
		a.Close()
		if got := entries(t, filepath.Dir(a.TmpDir())); len(got) != 0 && os.Geteuid() != 0 {
			t.Fatalf("left %q", got)
		}
		if _, err := os.Lstat(a.TmpDir()); err == nil {
			t.Fatal("the folder is still there")
		}
	})
	cases := []struct {
		name  string
		plant func(t *testing.T, spare, home string)
	}{
		{"a spare that holds something", func(t *testing.T, spare, _ string) {
			os.MkdirAll(spare, 0o700)
			os.WriteFile(filepath.Join(spare, "left"), []byte("x"), 0o600)
		}},
		{"a spare that is a link", func(t *testing.T, spare, home string) {
			target := filepath.Join(home, "elsewhere")
			os.MkdirAll(target, 0o700)
			os.Symlink(target, spare)
		}},
		{"a spare that is a file", func(t *testing.T, spare, _ string) {
			os.WriteFile(spare, []byte("x"), 0o600)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			first := newTmpBox(t, home, "first") // makes the folders
			first.Close()
			tmpRoot := filepath.Dir(first.TmpDir())
			spare := filepath.Join(tmpRoot, ".spare-0")
			os.RemoveAll(spare)
			c.plant(t, spare, home)
			b := newTmpBox(t, home, "b")
			defer b.Close()
			fi, err := os.Lstat(b.TmpDir())
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || len(entries(t, b.TmpDir())) != 0 {
				t.Fatalf("the new box's folder: %v %v %q", fi, err, entries(t, b.TmpDir()))
			}
			if _, err := os.Stat(filepath.Join(home, "elsewhere")); c.name == "a spare that is a link" && err != nil {
				t.Fatalf("the link's target: %v", err)
			}
		})
	}
}

// TestResolverAgreesWithEvalSymlinks: the remembering resolver gives what
// filepath.EvalSymlinks gives, for paths through links, to links, to
// missing targets and in loops, asked in any order.
func TestResolverAgreesWithEvalSymlinks(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	mk := func(rel string) { os.MkdirAll(filepath.Join(root, rel), 0o755) }
	link := func(target, rel string) { os.Symlink(target, filepath.Join(root, rel)) }
	mk("home/.agent/sandbox/tmp/run-1")
	mk("home/.agent/sandbox/cache/abc")
	mk("real/ws")
	os.WriteFile(filepath.Join(root, "real/ws/file"), []byte("x"), 0o644)
	link(filepath.Join(root, "real"), "home/proj")          // a folder link
	link("../real/ws/file", "home/file-link")               // a relative link to a file
	link(filepath.Join(root, "missing"), "home/dangling")   // a link to nothing
	link(filepath.Join(root, "home/loop-b"), "home/loop-a") // a loop
	link(filepath.Join(root, "home/loop-a"), "home/loop-b")
	link("proj/ws", "home/chain") // a link through a link
	paths := []string{
		"home/.agent/sandbox/tmp/run-1", "home/.agent/sandbox/cache/abc", "home/.agent", "home/.ssh",
		"home/proj/ws", "home/proj/ws/file", "home/proj/nothing", "home/file-link", "home/dangling",
		"home/dangling/below", "home/loop-a", "home/loop-a/x", "home/chain", "home/chain/file",
		"home/.agent/../proj/ws", "home", "",
	}
	for _, order := range [][]string{paths, reversed(paths)} {
		r := resolver{}
		for _, rel := range order {
			p := filepath.Join(root, rel)
			want, werr := filepath.EvalSymlinks(p)
			got, ok := r.real(filepath.Clean(p))
			if ok != (werr == nil) || ok && got != want {
				t.Errorf("%s: resolver %q %v, EvalSymlinks %q %v", rel, got, ok, want, werr)
			}
		}
	}
	if got := (resolver{}).paths([]string{"relative", "", filepath.Join(root, "home/.ssh"), filepath.Join(root, "home/proj")}); len(got) != 1 || got[0] != filepath.Join(root, "real") {
		t.Errorf("paths: %q", got)
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
