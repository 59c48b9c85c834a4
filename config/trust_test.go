package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"agent/internal/securefile"
)

func TestTrustStore(t *testing.T) {
	home := t.TempDir()
	ws := "/work/project"
	if ok, err := IsTrusted(home, ws); ok || err != nil {
		t.Fatalf("fresh store: %v %v", ok, err)
	}
	if was, err := Trust(home, ws, time.Unix(0, 0)); was || err != nil {
		t.Fatal(was, err)
	}
	if was, _ := Trust(home, ws, time.Now()); !was {
		t.Fatal("second trust should report already trusted")
	}
	if ok, _ := IsTrusted(home, ws); !ok {
		t.Fatal("not trusted after Trust")
	}
	if ok, _ := IsTrusted(home, ws+"/sub"); ok {
		t.Fatal("a subfolder is a different workspace")
	}
	fi, err := os.Stat(TrustStorePath(home))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("store mode: %v %v", fi.Mode(), err)
	}
	di, _ := os.Stat(UserDir(home))
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("user dir mode %v", di.Mode())
	}
	list, _ := TrustedWorkspaces(home)
	if len(list) != 1 || list[0] != ws {
		t.Fatal(list)
	}
	if was, _ := Untrust(home, ws); !was {
		t.Fatal("untrust")
	}
	if was, _ := Untrust(home, ws); was {
		t.Fatal("second untrust")
	}
	if ok, _ := IsTrusted(home, ws); ok {
		t.Fatal("still trusted")
	}
}

func TestTrustStoreRefusesLooseOrCorrupt(t *testing.T) {
	home := t.TempDir()
	Trust(home, "/w", time.Now())
	os.Chmod(TrustStorePath(home), 0o666)
	if _, err := IsTrusted(home, "/w"); !errors.Is(err, securefile.ErrInsecure) {
		t.Fatalf("a world-writable store must be refused: %v", err)
	}
	os.Chmod(TrustStorePath(home), 0o600)
	for _, bad := range []string{`{"version":1,"workspaces":{"/w":{}},"workspaces":{}}`, `{"version":2,"workspaces":{}}`, `{"Version":1}`, `nope`} {
		os.WriteFile(TrustStorePath(home), []byte(bad), 0o600)
		if _, err := IsTrusted(home, "/w"); err == nil {
			t.Errorf("%s accepted", bad)
		}
		if _, err := Trust(home, "/x", time.Now()); err == nil {
			t.Errorf("Trust over a corrupt store %s must not overwrite it", bad)
		}
	}
}

func TestRealPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	a, _ := RealPath(real)
	b, _ := RealPath(link)
	if a != b {
		t.Fatalf("%s != %s", a, b)
	}
}
