package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseGitConfig(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []gitKV
		err  string
	}{
		{"empty", "", nil, ""},
		{"a plain variable", "[core]\n\tbare = false\n", []gitKV{{"core.bare", "false"}}, ""},
		{"case folding", "[Core]\n\tHooksPath = Hooks\n", []gitKV{{"core.hookspath", "Hooks"}}, ""},
		{"a subsection keeps its case", "[branch \"Main\"]\n\tremote = origin\n", []gitKV{{"branch.Main.remote", "origin"}}, ""},
		{"the old dotted form", "[Remote.Origin]\nurl = x\n", []gitKV{{"remote.origin.url", "x"}}, ""},
		{"a bare name is true", "[core]\nfsmonitor\n", []gitKV{{"core.fsmonitor", "true"}}, ""},
		{"comments", "# top\n[core] ; here\n  pager = less # after\n", []gitKV{{"core.pager", "less"}}, ""},
		{"quotes keep comment marks and spaces", "[alias]\n  x = \"!sh -c 'a;b' # c\"\n", []gitKV{{"alias.x", "!sh -c 'a;b' # c"}}, ""},
		{"escapes", "[a]\n b = x\\ty\\\\z\\\"\n", []gitKV{{"a.b", "x\ty\\z\""}}, ""},
		{"a continued line", "[core]\n editor = vim \\\n  -n\nbare = true\n", []gitKV{{"core.editor", "vim   -n"}, {"core.bare", "true"}}, ""},
		{"inner whitespace kept, trailing dropped", "[a]\n b =  x  y  \n", []gitKV{{"a.b", "x  y"}}, ""},
		{"an escaped quote in a subsection", "[includeIf \"gitdir:a\\\"b\"]\npath = p\n", []gitKV{{"includeif.gitdir:a\"b.path", "p"}}, ""},
		{"CRLF", "[core]\r\n\tpager = less\r\n", []gitKV{{"core.pager", "less"}}, ""},
		{"several sections", "[a]\nx=1\n[b \"c\"]\ny=2\n", []gitKV{{"a.x", "1"}, {"b.c.y", "2"}}, ""},
		{"a byte-order mark", "\ufeff[a]\nx=1\n", []gitKV{{"a.x", "1"}}, ""},
		{"a variable before any section", "x = 1\n", nil, "before any [section]"},
		{"an unfinished header", "[core\n", nil, "without ']'"},
		{"an unfinished subsection", "[a \"b\n", nil, "unclosed subsection"},
		{"an unknown escape", "[a]\nb = \\q\n", nil, "unknown escape"},
		{"an open quote", "[a]\nb = \"x\n", nil, "unclosed quote"},
		{"junk after a name", "[a]\nb c\n", nil, "followed by something other than '='"},
		{"an empty section name", "[]\n", nil, "empty section"},
		{"a stray character", "[a]\n=1\n", nil, "unexpected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseGitConfig([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestRunsProgram(t *testing.T) {
	cases := []struct {
		name string
		kv   gitKV
		want bool
	}{
		{"core.hooksPath", gitKV{"core.hookspath", "x"}, true},
		{"core.fsmonitor", gitKV{"core.fsmonitor", "true"}, true},
		{"core.sshCommand", gitKV{"core.sshcommand", "ssh -i k"}, true},
		{"core.pager", gitKV{"core.pager", "less"}, true},
		{"core.editor", gitKV{"core.editor", "vim"}, true},
		{"core.bare", gitKV{"core.bare", "false"}, false},
		{"credential.helper", gitKV{"credential.helper", "store"}, true},
		{"credential for a host", gitKV{"credential.https://h.username", "u"}, true},
		{"include.path", gitKV{"include.path", "../x"}, true},
		{"includeIf", gitKV{"includeif.gitdir:/x/.path", "y"}, true},
		{"filter", gitKV{"filter.lfs.smudge", "git-lfs smudge"}, true},
		{"diff textconv", gitKV{"diff.pdf.textconv", "pdftotext"}, true},
		{"diff.external", gitKV{"diff.external", "x"}, true},
		{"diff.renames", gitKV{"diff.renames", "true"}, false},
		{"a shell alias", gitKV{"alias.st", " !rm -rf /"}, true},
		{"a git alias", gitKV{"alias.st", "status -s"}, false},
		{"merge driver", gitKV{"merge.ours.driver", "true"}, true},
		{"url insteadOf", gitKV{"url.ext::sh -c x.insteadof", "https://"}, true},
		{"remote uploadpack", gitKV{"remote.origin.uploadpack", "x"}, true},
		{"remote url", gitKV{"remote.origin.url", "https://h/r"}, false},
		{"branch upstream (git push -u)", gitKV{"branch.main.remote", "origin"}, false},
		{"branch merge", gitKV{"branch.main.merge", "refs/heads/main"}, false},
		{"user name", gitKV{"user.name", "a"}, false},
		{"gpg.program", gitKV{"gpg.program", "x"}, true},
		{"gpg.ssh.program", gitKV{"gpg.ssh.program", "x"}, true},
		{"submodule update command", gitKV{"submodule.m.update", "!x"}, true},
		{"submodule update checkout", gitKV{"submodule.m.update", "checkout"}, false},
		{"pager per command", gitKV{"pager.log", "x"}, true},
		{"protocol allow", gitKV{"protocol.ext.allow", "always"}, true},
		{"sequence editor", gitKV{"sequence.editor", "x"}, true},
		{"difftool cmd", gitKV{"difftool.x.cmd", "x"}, true},
		{"trailer command", gitKV{"trailer.sign.command", "x"}, true},
		{"sendemail smtpserver", gitKV{"sendemail.smtpserver", "/bin/x"}, true},
		{"imap tunnel", gitKV{"imap.tunnel", "x"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := runsProgram(c.kv); got != c.want {
				t.Fatalf("%v: %v, want %v", c.kv, got, c.want)
			}
		})
	}
}

func FuzzParseGitConfig(f *testing.F) {
	for _, s := range []string{"", "[core]\n\tbare = false\n", "[a \"b\"]\nc = \"d\\\"e\" ; x\n", "[a]\nb = x \\\n y\n", "[a.b]\nc\n", "[a]\nb = \"x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kvs, err := parseGitConfig(data)
		if err != nil {
			return
		}
		for _, kv := range kvs {
			section, _, name := splitGitKey(kv.Key)
			if section == "" || name == "" || section != strings.ToLower(section) || name != strings.ToLower(name) {
				t.Fatalf("key %q from %q", kv.Key, data)
			}
			runsProgram(kv)
		}
	})
}
