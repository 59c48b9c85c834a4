//go:build !linux

package search

import "os"

// readDir lists a folder with the portable reader.
func readDir(path string, _ *[]byte, fn func(name string, typ EntryType)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	for _, e := range ents {
		fn(e.Name(), typeOf(e.Type()))
	}
	return err
}
