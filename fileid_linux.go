package main

import (
	"os"
	"syscall"
)

// idOf returns fi's identity (cleanup.go); ok is false where the system
// has none.
func idOf(fi os.FileInfo) (fileID, bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	sec, nsec := sys.Ctim.Unix()
	return fileID{Dev: uint64(sys.Dev), Ino: uint64(sys.Ino), Ctime: sec, CtimeNs: nsec}, true
}
