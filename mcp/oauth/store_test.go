package oauth

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"agent/internal/securefile"
)

func TestStore(t *testing.T) {
	s := NewStore(t.TempDir())
	id := Identity{Name: "gh", Scope: "user", File: "/h/.agent/settings.json", URL: "https://a.example/mcp"}
	if _, err := s.Load(id); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &Credentials{Server: "gh", AccessToken: "secret-access", RefreshToken: "secret-refresh", Expiry: exp, TokenEndpoint: "https://as/token"}
	if err := s.Save(id, c); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(s.Path(id))
	di, _ := os.Stat(s.Dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", fi.Mode(), di.Mode())
	}
	got, err := s.Load(id)
	if err != nil || got.AccessToken != "secret-access" || !got.Expiry.Equal(exp) {
		t.Fatalf("%+v %v", got, err)
	}
	if strings.Contains(got.String(), "secret") {
		t.Fatal("String shows a secret")
	}
	// Another definition under the same name, or another URL, has its own file.
	for _, other := range []Identity{{Name: "gh", Scope: "project", File: "/ws/.agent/settings.json", URL: id.URL}, {Name: "gh", Scope: "user", File: id.File, URL: "https://b.example/mcp"}} {
		if s.Path(other) == s.Path(id) {
			t.Fatalf("identity %+v shares the file", other)
		}
	}
	// States.
	now := time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)
	if st, _ := s.State(id, now); st != SignedIn {
		t.Fatal(st)
	}
	if st, _ := s.State(id, exp.Add(time.Second)); st != TokenExpired {
		t.Fatal(st)
	}
	c.RefreshToken = ""
	s.Save(id, c)
	if st, _ := s.State(id, exp.Add(time.Second)); st != SignInRequired {
		t.Fatal(st)
	}
	// Loose permissions are refused.
	os.Chmod(s.Path(id), 0o644)
	if _, err := s.Load(id); !errors.Is(err, securefile.ErrInsecure) {
		t.Fatal(err)
	}
	if st, err := s.State(id, now); st != SignInRequired || err == nil {
		t.Fatal(st, err)
	}
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(id); err != nil {
		t.Fatal("deleting twice is fine")
	}
	if st, _ := s.State(id, now); st != SignedOut {
		t.Fatal(st)
	}
}
