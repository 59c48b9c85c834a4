package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestTmpSpares: a closed box's private folder is removed, never handed
// on (a process its command left running keeps it); the spares the next
// boxes take are fresh folders made while a command runs, empty, mode
// 0700; what cannot be a spare is never taken as one.
func TestTmpSpares(t *testing.T) {
	inode := func(t *testing.T, p string) uint64 {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	waitSpares := func(t *testing.T, dir string) []string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			var got []string
			for _, n := range entries(t, dir) {
				if strings.HasPrefix(n, ".spare-") {
					got = append(got, n)
				}
			}
			if len(got) == spares || time.Now().After(deadline) {
				return got
			}
			time.Sleep(time.Millisecond)
		}
	}
	t.Run("a closed box's folder is removed, not handed on", func(t *testing.T) {
		home := t.TempDir()
		a := newTmpBox(t, home, "a")
		os.WriteFile(filepath.Join(a.TmpDir(), "f"), []byte("secret"), 0o600)
		os.MkdirAll(filepath.Join(a.TmpDir(), "d", "e"), 0o755)
		a.Close()
		tmpRoot := filepath.Dir(a.TmpDir())
		if got := entries(t, tmpRoot); len(got) != 0 {
			t.Fatalf("after Close: %q", got)
		}
		b := newTmpBox(t, home, "b")
		defer b.Close()
		if got := entries(t, b.TmpDir()); len(got) != 0 {
			t.Fatalf("the new box's folder holds %q", got)
		}
	})
	t.Run("fresh spares, made while a box works, taken by the next", func(t *testing.T) {
		home := t.TempDir()
		a := newTmpBox(t, home, "a")
		a.refillSpares()
		tmpRoot := filepath.Dir(a.TmpDir())
		got := waitSpares(t, tmpRoot)
		if len(got) != spares {
			t.Fatalf("spares: %q", got)
		}
		for _, n := range got {
			fi, err := os.Lstat(filepath.Join(tmpRoot, n))
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || len(entries(t, filepath.Join(tmpRoot, n))) != 0 {
				t.Fatalf("spare %s: %v %v", n, fi, err)
			}
		}
		spare := inode(t, filepath.Join(tmpRoot, ".spare-0"))
		a.Close()
		b := newTmpBox(t, home, "b")
		defer b.Close()
		if inode(t, b.TmpDir()) != spare {
			t.Fatal("the new box made a folder instead of taking the spare")
		}
		b.refillSpares()
		if got := waitSpares(t, tmpRoot); len(got) != spares {
			t.Fatalf("after a refill: %q", got)
		}
	})
	t.Run("a link where the box's folder goes", func(t *testing.T) {
		home := t.TempDir()
		first := newTmpBox(t, home, "first") // makes the folders
		first.Close()
		target := filepath.Join(home, "victim")
		os.MkdirAll(target, 0o700)
		os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o600)
		os.Symlink(target, filepath.Join(filepath.Dir(first.TmpDir()), "b"))
		b := newTmpBox(t, home, "b")
		fi, err := os.Lstat(b.TmpDir())
		if err != nil || !fi.IsDir() {
			t.Fatalf("the box's folder: %v %v", fi, err)
		}
		b.Close()
		if got := entries(t, target); len(got) != 1 {
			t.Fatalf("the link's target holds %q", got)
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
