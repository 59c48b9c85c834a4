package keymap

import "unsafe"

// unsafePointer reads an inotify event header in place: the kernel
// writes them into the buffer in its own layout, aligned.
func unsafePointer(b *byte) unsafe.Pointer { return unsafe.Pointer(b) }
