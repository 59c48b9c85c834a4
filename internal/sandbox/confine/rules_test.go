package confine

import (
	"errors"
	"io/fs"
	"reflect"
	"sort"
	"testing"
)

// fakeTree is a folder tree for planRules: folder → entries.
type fakeTree map[string][]dirEntry

func (f fakeTree) list(dir string) ([]dirEntry, error) {
	ents, ok := f[dir]
	if !ok {
		return nil, errors.New("not a folder")
	}
	return ents, nil
}

func dirs(names ...string) []dirEntry {
	out := make([]dirEntry, len(names))
	for i, n := range names {
		out[i] = dirEntry{name: n, typ: fs.ModeDir}
		if n[0] == '-' {
			out[i] = dirEntry{name: n[1:]} // a file
		}
		if n[0] == '@' {
			out[i] = dirEntry{name: n[1:], typ: fs.ModeSymlink}
		}
	}
	return out
}

func TestPlanRules(t *testing.T) {
	tree := fakeTree{
		"/":                dirs("bin", "etc", "home", "usr"),
		"/home":            dirs("u"),
		"/home/u":          dirs(".ssh", ".config", "-.netrc", "@link-to-ssh", "src", ".docker"),
		"/home/u/.config":  dirs("gh", "nvim"),
		"/home/u/.docker":  dirs("-config.json", "-daemon.json"),
		"/home/u/.ssh":     dirs("-id", "-known_hosts"),
		"/home/u/src":      dirs("app"),
		"/home/u/src/app":  dirs(".git"),
		"/home/u/.config/": nil,
	}
	rd := uint64(llReadRights)
	full := uint64(llIoctlDev<<1 - 1)
	cases := []struct {
		name string
		p    Policy
		want []pathRule
	}{
		{"nothing denied: the root whole", Policy{Read: []string{"/"}}, []pathRule{{path: "/", access: rd}}},
		{"a denied folder is walked around",
			Policy{Read: []string{"/"}, Deny: []string{"/home/u/.ssh"}},
			[]pathRule{{"/", llReadDir, false}, {"/bin", rd, true}, {"/etc", rd, true}, {"/home", llReadDir, false}, {"/home/u", llReadDir, false},
				{"/home/u/.config", rd, true}, {"/home/u/.docker", rd, true}, {"/home/u/.netrc", rd, true}, {"/home/u/src", rd, true}, {"/usr", rd, true}}},
		{"denied files and nested folders",
			Policy{Read: []string{"/"}, Deny: []string{"/home/u/.netrc", "/home/u/.config/gh", "/home/u/.docker/config.json"}},
			[]pathRule{{"/", llReadDir, false}, {"/bin", rd, true}, {"/etc", rd, true}, {"/home", llReadDir, false}, {"/home/u", llReadDir, false},
				{"/home/u/.config", llReadDir, false}, {"/home/u/.config/nvim", rd, true}, {"/home/u/.docker", llReadDir, false},
				{"/home/u/.docker/daemon.json", rd, true}, {"/home/u/.ssh", rd, true}, {"/home/u/src", rd, true}, {"/usr", rd, true}}},
		{"a denied path that is missing costs nothing below it",
			Policy{Read: []string{"/"}, Deny: []string{"/home/u/.aws"}},
			[]pathRule{{"/", llReadDir, false}, {"/bin", rd, true}, {"/etc", rd, true}, {"/home", llReadDir, false}, {"/home/u", llReadDir, false},
				{"/home/u/.config", rd, true}, {"/home/u/.docker", rd, true}, {"/home/u/.netrc", rd, true}, {"/home/u/.ssh", rd, true}, {"/home/u/src", rd, true}, {"/usr", rd, true}}},
		{"grants on their own",
			Policy{Read: []string{"/"}, AllowRead: []string{"/home/u/.ssh/known_hosts"}, Write: []string{"/home/u/src/app", "/t"}, Devices: []string{"/dev/null"}},
			[]pathRule{{path: "/", access: rd}, {path: "/home/u/.ssh/known_hosts", access: rd}, {path: "/home/u/src/app", access: full}, {path: "/t", access: full},
				{path: "/dev/null", access: llReadFile | llWriteFile | llIoctlDev}}},
		{"relative paths are ignored", Policy{Read: []string{"/"}, Write: []string{"rel"}}, []pathRule{{path: "/", access: rd}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := planRules(&c.p, tree.list)
			if c.name != "grants on their own" {
				sort.Slice(got, func(i, j int) bool { return got[i].path < got[j].path })
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestRightsByABI(t *testing.T) {
	cases := []struct {
		abi                 int
		fs, netNone, scoped uint64
	}{
		{0, 0, 0, 0},
		{1, 1<<13 - 1, 0, 0},
		{2, 1<<14 - 1, 0, 0},
		{3, 1<<15 - 1, 0, 0},
		{4, 1<<15 - 1, 3, 0},
		{5, 1<<16 - 1, 3, 0},
		{6, 1<<16 - 1, 3, 3},
		{7, 1<<16 - 1, 3, 3},
	}
	for _, c := range cases {
		if got := fsRights(c.abi); got != c.fs {
			t.Errorf("abi %d: fs %#x, want %#x", c.abi, got, c.fs)
		}
		if got := netRights(c.abi, NetNone); got != c.netNone {
			t.Errorf("abi %d: net %#x, want %#x", c.abi, got, c.netNone)
		}
		if got := netRights(c.abi, NetHost); got != 0 {
			t.Errorf("abi %d: host network handled", c.abi)
		}
		if got := scopes(c.abi, false); got != c.scoped {
			t.Errorf("abi %d: scopes %#x, want %#x", c.abi, got, c.scoped)
		}
		if c.abi >= 6 && scopes(c.abi, true) != llScopeSignal {
			t.Errorf("abi %d: unix sockets allowed but abstract ones scoped", c.abi)
		}
	}
}
