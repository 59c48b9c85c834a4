//go:build !linux

package keymap

// dirEvents: without inotify the watcher polls.
func dirEvents(dir string) (<-chan struct{}, func(), bool) { return nil, nil, false }
