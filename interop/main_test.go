package interop

import (
	"os"
	"sync"
	"testing"
)

// buildTemp is the folder of the programs the tests build, removed when
// the tests end.
var buildTemp struct {
	once sync.Once
	dir  string
	err  error
}

// buildDir makes a new folder inside buildTemp.
func buildDir(prefix string) (string, error) {
	buildTemp.once.Do(func() { buildTemp.dir, buildTemp.err = os.MkdirTemp("", "agent-interop-") })
	if buildTemp.err != nil {
		return "", buildTemp.err
	}
	return os.MkdirTemp(buildTemp.dir, prefix)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildTemp.dir != "" {
		os.RemoveAll(buildTemp.dir)
	}
	os.Exit(code)
}
