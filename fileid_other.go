//go:build !linux

package main

import (
	"os"
	"syscall"
)

// idOf returns fi's identity (cleanup.go): the modification time stands
// in for the change time, which Stat_t names differently per system; the
// files identified are never modified after they are written.
func idOf(fi os.FileInfo) (fileID, bool) {
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	t := fi.ModTime()
	return fileID{Dev: uint64(sys.Dev), Ino: uint64(sys.Ino), Ctime: t.Unix(), CtimeNs: int64(t.Nanosecond())}, true
}
