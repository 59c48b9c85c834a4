package confine

import (
	"io/fs"
	"path"
)

// Landlock access rights (include/uapi/linux/landlock.h), by the ABI that
// brought them.
const (
	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3
	llIoctlDev   = 1 << 15 // ABI 5

	llNetBindTCP    = 1 << 0 // ABI 4
	llNetConnectTCP = 1 << 1 // ABI 4

	llScopeAbstractUnix = 1 << 0 // ABI 6
	llScopeSignal       = 1 << 1 // ABI 6

	// Rights that apply to a file rather than a folder's contents.
	llFileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev
	llReadRights = llExecute | llReadFile | llReadDir
)

// fsRights are the file-system rights an ABI knows: what the ruleset
// handles, so that everything not granted is refused.
func fsRights(abi int) uint64 {
	switch {
	case abi <= 0:
		return 0
	case abi == 1:
		return llRefer - 1
	case abi == 2:
		return llTruncate - 1
	case abi < 5:
		return llIoctlDev - 1
	}
	return llIoctlDev<<1 - 1
}

// netRights are the TCP rights handled (refused, with no port granted) in
// the none mode from ABI 4.
func netRights(abi int, n NetMode) uint64 {
	if abi < 4 || n != NetNone {
		return 0
	}
	return llNetBindTCP | llNetConnectTCP
}

// scopes are the IPC scopes from ABI 6: signals to processes outside the
// sandbox always, abstract unix sockets unless unix sockets are allowed.
func scopes(abi int, unixConnect bool) uint64 {
	if abi < 6 {
		return 0
	}
	if unixConnect {
		return llScopeSignal
	}
	return llScopeSignal | llScopeAbstractUnix
}

// pathRule grants access beneath one path.
type pathRule struct {
	path   string
	access uint64
	// noFollow: the path is a folder entry found by listing; a symbolic
	// link there must not lend its rule to its target.
	noFollow bool
}

// dirEntry is what planning needs of a folder entry.
type dirEntry struct {
	name string
	typ  fs.FileMode // fs.ModeDir, fs.ModeSymlink, 0 for a file, …
}

// lister lists a folder; the helper uses os.ReadDir, the tests a map.
type lister func(dir string) ([]dirEntry, error)

// planRules turns a policy into Landlock rules. "Read everything but the
// denied paths" cannot be said to Landlock, which only grants: a readable
// hierarchy that holds a denied path is granted folder by folder instead.
// Each folder on the way to a denied path gets only the right to list it
// (hierarchical, so names below stay listable, contents do not); every
// other entry of such a folder gets the full read rights. Entries that
// appear later are not readable, which errs the safe way. Writable
// hierarchies are granted whole: a denied path inside one is hidden only
// by the namespace layer. In the namespace tier every denied path is
// hidden by a mount instead (hideDenied), and Deny is empty here.
func planRules(p *Policy, list lister) []pathRule {
	var rules []pathRule
	deny := cleanAll(p.Deny)
	var walk func(dir string)
	walk = func(dir string) {
		switch {
		case containsPath(deny, dir):
			return
		case !anyBelow(deny, dir):
			rules = append(rules, pathRule{path: dir, access: llReadRights})
			return
		}
		rules = append(rules, pathRule{path: dir, access: llReadDir})
		ents, err := list(dir)
		if err != nil {
			return // unreadable: nothing under it is granted
		}
		for _, e := range ents {
			child := path.Join(dir, e.name)
			switch {
			case e.typ&fs.ModeSymlink != 0:
				// Reading through a link is judged at its target.
			case e.typ&fs.ModeDir != 0 && anyBelow(deny, child):
				walk(child)
			case containsPath(deny, child):
			default:
				rules = append(rules, pathRule{path: child, access: llReadRights, noFollow: true})
			}
		}
	}
	for _, r := range cleanAll(p.Read) {
		walk(r)
	}
	for _, r := range cleanAll(p.AllowRead) {
		rules = append(rules, pathRule{path: r, access: llReadRights})
	}
	for _, w := range cleanAll(p.Write) {
		rules = append(rules, pathRule{path: w, access: llIoctlDev<<1 - 1})
	}
	for _, d := range cleanAll(p.Devices) {
		rules = append(rules, pathRule{path: d, access: llReadFile | llWriteFile | llIoctlDev})
	}
	return rules
}

func containsPath(ps []string, p string) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// anyBelow reports whether a path of ps lies strictly below dir.
func anyBelow(ps []string, dir string) bool {
	for _, q := range ps {
		if q != dir && Within(q, dir) {
			return true
		}
	}
	return false
}
