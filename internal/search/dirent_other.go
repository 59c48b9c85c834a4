//go:build !linux

package search

import (
	"io/fs"
	"os"
)

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

func typeOf(m fs.FileMode) EntryType {
	switch {
	case m.IsDir():
		return TypeDir
	case m.IsRegular():
		return TypeFile
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	}
	return TypeOther
}
