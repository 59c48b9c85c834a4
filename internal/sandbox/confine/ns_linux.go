package confine

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"
	"unsafe"
)

// The namespace layer (docs/sandbox.md, "How"): the helper starts in a new
// mount namespace, a new network namespace where the network mode needs
// one (Policy.NetNamespace), and, unless the agent is root with
// CAP_SYS_ADMIN, a new user namespace that owns them, where it holds the
// capabilities over nothing but itself that the agent made ambient and
// maps its own IDs (mapIDs). There it makes its mounts private, puts the private
// temporary folder over /tmp (keeping visible what the command needs that
// lived there), binds the protected paths read-only over themselves, hides
// what must not be seen, and brings the loopback interface up for the
// loopback mode. The capabilities go before the exec (dropCapabilities).

// statfs flags that a remount inside a user namespace must keep (they are
// locked) and their mount flags.
var lockedFlags = []struct{ st, ms uintptr }{
	{0x0002, syscall.MS_NOSUID},     // ST_NOSUID
	{0x0004, syscall.MS_NODEV},      // ST_NODEV
	{0x0008, syscall.MS_NOEXEC},     // ST_NOEXEC
	{0x0400, syscall.MS_NOATIME},    // ST_NOATIME
	{0x0800, syscall.MS_NODIRATIME}, // ST_NODIRATIME
	{0x1000, syscall.MS_RELATIME},   // ST_RELATIME
}

func mountFlagsOf(path string) (uintptr, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	var f uintptr
	for _, l := range lockedFlags {
		if uintptr(st.Flags)&l.st != 0 {
			f |= l.ms
		}
	}
	return f, nil
}

// bindReadOnly binds path over itself and makes that mount read-only.
func bindReadOnly(path string) error {
	if err := syscall.Mount(path, path, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s: %w", path, err)
	}
	f, err := mountFlagsOf(path)
	if err != nil {
		return fmt.Errorf("reading the mount flags of %s: %w", path, err)
	}
	if err := syscall.Mount("", path, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|f, ""); err != nil {
		return fmt.Errorf("making %s read-only: %w", path, err)
	}
	return nil
}

// hide puts an empty read-only file system over a folder, or /dev/null
// on a nodev mount over a file.
func hide(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return nil // nothing there to hide (a link is judged at its target)
	}
	if fi.IsDir() {
		err = syscall.Mount("tmpfs", path, "tmpfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "size=4k,nr_inodes=2,mode=000")
	} else if err = syscall.Mount("/dev/null", path, "", syscall.MS_BIND, ""); err == nil {
		// nodev: opening it is refused (Permission denied) rather than
		// reading nothing and swallowing writes.
		err = syscall.Mount("", path, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NODEV|syscall.MS_NOSUID|syscall.MS_NOEXEC, "")
	}
	if err != nil {
		return fmt.Errorf("hiding %s: %w", path, err)
	}
	return nil
}

// hideDenied hides a denied path, or veils it when something the command
// may use lies inside it (the private folders inside ~/.agent, a path
// allowRead re-opens).
func hideDenied(d string, keep []string) error {
	if !anyBelow(keep, d) {
		if containsPath(keep, d) {
			return nil
		}
		return hide(d)
	}
	return veil(d, keep)
}

// veil puts an empty file system over folder d that holds only the way to
// the kept paths below it, each bound back in its place: a handful of
// mounts however many entries d has (hiding the others one by one cost a
// mount per entry, and ~/.agent holds many), and their names are hidden
// too. The kept paths are opened before the veil covers them and bound
// from their descriptors.
func veil(d string, keep []string) error {
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() {
		return nil // nothing there to veil (a link is judged at its target)
	}
	type kept struct {
		rel string
		fd  int
		dir bool
	}
	var ks []kept
	defer func() {
		for _, k := range ks {
			syscall.Close(k.fd)
		}
	}()
	for _, k := range keep {
		if k == d || !Within(k, d) || anyAbove(keep, k, d) {
			continue
		}
		fd, err := syscall.Open(k, oPath|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue // missing: nothing to keep
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			syscall.Close(fd)
			continue
		}
		ks = append(ks, kept{rel: strings.TrimPrefix(k, d+"/"), fd: fd, dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR})
	}
	const flags = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC
	if err := syscall.Mount("tmpfs", d, "tmpfs", flags, "size=1m,nr_inodes=4096,mode=755"); err != nil {
		return fmt.Errorf("veiling %s: %w", d, err)
	}
	for _, k := range ks {
		target := d + "/" + k.rel
		if err := makeWay(d, k.rel, k.dir); err != nil {
			return fmt.Errorf("veiling %s: %w", d, err)
		}
		if err := syscall.Mount(fmt.Sprintf("/proc/self/fd/%d", k.fd), target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("veiling %s: binding %s back: %w", d, target, err)
		}
	}
	if err := syscall.Mount("", d, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("veiling %s: %w", d, err)
	}
	return nil
}

// anyAbove reports whether a path of ps other than k lies between d and k
// (k is then kept with it).
func anyAbove(ps []string, k, d string) bool {
	for _, q := range ps {
		if q != k && q != d && Within(q, d) && Within(k, q) {
			return true
		}
	}
	return false
}

// makeWay makes the folders of rel inside the veil at d, and its last
// element as a folder or an empty file, for a bind to cover.
func makeWay(d, rel string, dir bool) error {
	parts := strings.Split(rel, "/")
	p := d
	for i, part := range parts {
		p += "/" + part
		if i < len(parts)-1 || dir {
			if err := syscall.Mkdir(p, 0o755); err != nil && err != syscall.EEXIST {
				return err
			}
			continue
		}
		fd, err := syscall.Open(p, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o644)
		if err != nil {
			return err
		}
		syscall.Close(fd)
	}
	return nil
}

// privateTmp puts dir over /tmp, unless something the command needs
// lives under /tmp (its folder, a writable or readable hierarchy, its
// home): bound back inside the private folder, it would sit below the
// private folder's write rule, which Landlock follows across mount points.
// The command's TMPDIR is the private folder either way.
func privateTmp(dir string, keep []string) error {
	if fi, err := os.Lstat("/tmp"); err != nil || !fi.IsDir() || dir == "" {
		return nil
	}
	for _, k := range keep {
		if k != "" && Within(path.Clean(k), "/tmp") {
			return nil
		}
	}
	if err := syscall.Mount(dir, "/tmp", "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("binding the private temporary folder over /tmp: %w", err)
	}
	return nil
}

// loopbackUp brings the namespace's loopback interface up.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer syscall.Close(fd)
	var ifr [40]byte // struct ifreq: the name, then a short of flags
	copy(ifr[:], "lo")
	if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return fmt.Errorf("loopback flags: %w", e)
	}
	flags := *(*uint16)(unsafe.Pointer(&ifr[16])) | syscall.IFF_UP
	*(*uint16)(unsafe.Pointer(&ifr[16])) = flags
	if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		return fmt.Errorf("loopback up: %w", e)
	}
	return nil
}

// setupNamespaces arranges the mount and network namespaces the helper was
// started in.
func setupNamespaces(p *Policy) error {
	if p.UserNS {
		if err := mapIDs(p.UID, p.GID); err != nil {
			return err
		}
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	if err := privateTmp(p.TmpDir, append(append(append([]string{p.Dir}, p.Write...), p.AllowRead...), envValue(p.Env, "HOME"))); err != nil {
		return err
	}
	for _, path := range p.Protected {
		if err := bindReadOnly(path); err != nil && !errors.Is(err, syscall.ENOENT) {
			return err
		}
	}
	// The denied paths are hidden here rather than left out of Landlock's
	// read rules: a handful of mounts instead of a rule for every entry
	// of every folder on the way to them.
	keep := cleanAll(append(append([]string(nil), p.Write...), p.AllowRead...))
	var done []string
	for _, d := range cleanAll(p.Deny) {
		if WithinAny(d, done) {
			continue // hidden or veiled with a folder above it
		}
		if err := hideDenied(d, keep); err != nil {
			return err
		}
		done = append(done, d)
	}
	if p.Network == NetLoopback {
		return loopbackUp()
	}
	return nil
}

// mapIDs maps the agent's user and group onto themselves in the helper's
// new user namespace, as the kernel lets the namespace's owner do for its
// own IDs alone (user_namespaces(7), "Defining user and group ID
// mappings"): setgroups is denied first, which an unprivileged group map
// requires. Until then the helper runs as the overflow IDs, holding the
// capabilities the agent made ambient.
func mapIDs(uid, gid int) error {
	for _, m := range []struct{ file, data string }{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/uid_map", fmt.Sprintf("%d %d 1\n", uid, uid)},
		{"/proc/self/gid_map", fmt.Sprintf("%d %d 1\n", gid, gid)},
	} {
		fd, err := syscall.Open(m.file, syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening %s: %w", m.file, err)
		}
		_, err = syscall.Write(fd, []byte(m.data))
		syscall.Close(fd)
		if err != nil {
			return fmt.Errorf("writing %s: %w", m.file, err)
		}
	}
	return nil
}

// envValue finds a variable in an environment list.
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
