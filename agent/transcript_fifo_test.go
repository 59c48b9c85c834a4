package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO among the stored transcripts is skipped by the listing, without
// waiting for a writer.
func TestListTranscriptsSkipsNonRegularFiles(t *testing.T) {
	home := t.TempDir()
	dir := SessionsDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "good.jsonl"), []byte(`{"type":"session","workspace":"/w"}`+"\n"), 0o600)
	infos, err := ListTranscripts(home) // before the fix: blocked in open(2)
	if err != nil || len(infos) != 1 || infos[0].ID != "good" {
		t.Fatalf("listed %+v", infos)
	}
}
