package ignore

// Dir is the rules in force in one folder of a walk: its own ignore files
// and, through its parent, those of every folder above it. Paths given to
// Ignored are relative to the walk's top folder; each folder knows the
// length of its own prefix in them. A Dir is immutable once made, so the
// folders of a parallel walk share their parents' rules.
//
// The order is ripgrep's, which agrees with git where git has a say:
// .ignore files first (the nearest folder's first, at any height), then,
// inside a git repository, .gitignore files (nearest first, not above the
// repository's root), then the repository's info/exclude, then the user's
// excludes file. Within one file the last matching pattern decides; the
// first file with a matching pattern decides for the path.
type Dir struct {
	parent *Dir
	prefix int // bytes of a path that name this folder, with its '/'

	ignore    *List // .ignore
	gitignore *List // .gitignore (only read inside a repository)
	// repo is set on a repository's root folder; exclude and global are
	// its info/exclude and the user's excludes file.
	repo            bool
	exclude, global *List
	inRepo          bool // this folder or one above is a repository's root
}

// Rules are what a folder brings to a walk.
type Rules struct {
	Ignore    *List // the folder's .ignore
	Gitignore *List // the folder's .gitignore
	// Repo marks the root of a git repository (a folder with .git);
	// Exclude is its info/exclude and Global the user's excludes file.
	Repo            bool
	Exclude, Global *List
}

// Child returns the rules of a folder below d (d may be nil for the top):
// prefix is the length of the folder's path within the walk's paths,
// including its trailing '/' (0 for the top folder). It returns d itself
// when the folder brings nothing.
//
// A .gitignore outside every repository is not read, as ripgrep does not:
// git would not consult it.
func (d *Dir) Child(prefix int, r Rules) *Dir {
	inRepo := r.Repo || d.InRepo()
	if !inRepo {
		r.Gitignore = nil
	}
	if r.Ignore == nil && r.Gitignore == nil && !r.Repo {
		if d == nil {
			return &Dir{prefix: prefix}
		}
		return d
	}
	return &Dir{parent: d, prefix: prefix, ignore: r.Ignore, gitignore: r.Gitignore, repo: r.Repo, exclude: r.Exclude, global: r.Global, inRepo: inRepo}
}

// InRepo reports whether the folder is inside a git repository.
func (d *Dir) InRepo() bool { return d != nil && d.inRepo }

// Ignored reports whether path (relative to the walk's top folder, below
// d's folder) is ignored; dir says whether it is a folder.
func (d *Dir) Ignored(path string, dir bool) bool {
	for x := d; x != nil; x = x.parent {
		if x.ignore != nil && len(path) > x.prefix {
			if r := x.ignore.Match(path[x.prefix:], dir); r != None {
				return r == Ignored
			}
		}
	}
	for x := d; x != nil; x = x.parent {
		if x.gitignore != nil && len(path) > x.prefix {
			if r := x.gitignore.Match(path[x.prefix:], dir); r != None {
				return r == Ignored
			}
		}
		if x.repo {
			for _, l := range [2]*List{x.exclude, x.global} {
				if r := l.Match(path[x.prefix:], dir); r != None {
					return r == Ignored
				}
			}
			return false
		}
	}
	return false
}
