package securefile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestEnsureDir(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "a", "b")
	if err := EnsureDir(d); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(d)
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	// A loose directory of ours is tightened.
	os.Chmod(d, 0o755)
	if err := EnsureDir(d); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(d)
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("not tightened: %o", fi.Mode().Perm())
	}
	// A file in the way is an error.
	f := filepath.Join(root, "file")
	os.WriteFile(f, nil, 0o600)
	if err := EnsureDir(f); err == nil {
		t.Fatal("file accepted as directory")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := WriteFile(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "two" {
		t.Fatalf("content %q", b)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
	// Failure (directory missing) leaves nothing behind and names the path.
	err := WriteFile(filepath.Join(dir, "missing", "x"), []byte("z"))
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("got %v", err)
	}
}

func TestWriteFileKeepsOldOnFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	WriteFile(p, []byte("old"))
	// Make the target a directory: rename over it fails; the temp must go.
	sub := filepath.Join(dir, "d")
	os.Mkdir(sub, 0o700)
	os.WriteFile(filepath.Join(sub, "keep"), []byte("x"), 0o600)
	if err := WriteFile(sub, []byte("new")); err == nil {
		t.Fatal("rename over a non-empty directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func TestCreateExclusive(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	if err := CreateExclusive(p, []byte("secret")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	if err := CreateExclusive(p, []byte("again")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v", err)
	}
	// A dangling symlink is not followed.
	l := filepath.Join(dir, "link")
	os.Symlink(filepath.Join(dir, "target"), l)
	if err := CreateExclusive(l, []byte("x")); err == nil {
		t.Fatal("created through a symlink")
	}
	if _, err := os.Stat(filepath.Join(dir, "target")); err == nil {
		t.Fatal("symlink target was created")
	}
}

func TestReadSecret(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cred")
	os.WriteFile(p, []byte("tok"), 0o600)
	b, err := ReadSecret(p, 100)
	if err != nil || string(b) != "tok" {
		t.Fatalf("%q %v", b, err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o660} {
		os.Chmod(p, mode)
		if _, err := ReadSecret(p, 100); !errors.Is(err, ErrInsecure) {
			t.Fatalf("mode %o accepted: %v", mode, err)
		}
	}
	os.Chmod(p, 0o600)
	if _, err := ReadSecret(p, 2); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("size limit: %v", err)
	}
	l := filepath.Join(dir, "link")
	os.Symlink(p, l)
	if _, err := ReadSecret(l, 100); err == nil {
		t.Fatal("read through a symlink")
	}
	if _, err := ReadSecret(dir, 100); err == nil {
		t.Fatal("read a directory")
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "g.json")
	os.WriteFile(p, []byte("12345"), 0o644)
	if _, err := ReadFile(p, 4); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("limit: %v", err)
	}
	if b, err := ReadFile(p, 5); err != nil || string(b) != "12345" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ReadFile(dir, 5); err == nil {
		t.Fatal("directory accepted")
	}
}

// TestOpenRefusesNonRegularWithoutWaiting: every kind of file but a regular
// one is refused by Open, ReadFile and ReadSecret, and a FIFO without a
// writer does not make them wait.
func TestOpenRefusesNonRegularWithoutWaiting(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	link := filepath.Join(dir, "link-to-fifo")
	os.Symlink(fifo, link)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	cases := []struct {
		name, path, kind string
	}{
		{"a FIFO", fifo, "a FIFO"},
		{"a link to a FIFO", link, "a FIFO"},
		{"a socket (open(2) itself refuses it)", sock, ""},
		{"a folder", sub, "a folder"},
		{"a character device", os.DevNull, "a character device"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, _, err := Open(c.path, 0)
			if f != nil {
				f.Close()
			}
			if c.kind == "" {
				if err == nil {
					t.Fatal("Open accepted it")
				}
				return
			}
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.path+": not a regular file ("+c.kind+")") {
				t.Fatalf("Open: %v", err)
			}
			if _, err := ReadFile(c.path, 1<<10); !errors.Is(err, ErrNotRegular) {
				t.Fatalf("ReadFile: %v", err)
			}
			if _, err := ReadSecret(c.path, 1<<10); err == nil || c.path != link && !errors.Is(err, ErrInsecure) {
				t.Fatalf("ReadSecret: %v", err)
			}
		})
	}
	// A regular file opens, and its content reads normally.
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, []byte("content"), 0o600)
	f, fi, err := Open(reg, 0)
	if err != nil || fi.Size() != 7 {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "content" {
		t.Fatalf("read %q", b)
	}
}

func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	// A new file gets newPerm; an existing one keeps its mode.
	if err := ReplaceFile(p, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Fatalf("new file mode %o", fi.Mode().Perm())
	}
	os.Chmod(p, 0o604)
	if err := ReplaceFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o604 {
		t.Fatalf("kept mode %o", fi.Mode().Perm())
	}
	// A failure at the last step leaves the old content and no
	// temporary file.
	rename = func(string, string) error { return errors.New("disk on fire") }
	defer func() { rename = os.Rename }()
	for _, target := range []string{p, filepath.Join(dir, "fresh.json")} {
		if err := ReplaceFile(target, []byte("three"), 0o600); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("%s: %v", target, err)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Fatalf("content %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	// Not a regular file: refused.
	if err := ReplaceFile(dir, []byte("x"), 0o600); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("a folder: %v", err)
	}
}
