package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

// diskTemplateVer names the mkfs options below; change it with them.
const diskTemplateVer = "v2"

// newDisk makes the sandbox's disk image img: a fresh ext4 file system of
// that size and inode count. For the operator's default size, mkfs runs
// once into a template under StateDir/disk-templates and each sandbox
// copies it (reflink where the host file system can, else a sparse copy
// of its 144 KiB of metadata), which is much faster than mkfs on
// every create. Other sizes get their own mkfs: one template per size a
// user asks for would let users fill the host disk with templates.
func (m *Manager) newDisk(img string, size, inodes int64) error {
	if size != m.cfg.DefaultDiskBytes || inodes != m.defaultInodes(size) {
		return m.mkfs(img, size, inodes)
	}
	tpl, err := m.diskTemplate(size, inodes)
	if err != nil {
		return err
	}
	if err := copySparse(tpl, img); err != nil {
		return fmt.Errorf("sandbox: disk image: %w", err)
	}
	return nil
}

// defaultInodes is the inode count of a disk of size bytes whose spec
// does not say.
func (m *Manager) defaultInodes(size int64) int64 {
	return min(m.cfg.DefaultInodes, size/bytesPerInode)
}

// diskTemplate returns the template image for (size, inodes), making it
// if needed.
func (m *Manager) diskTemplate(size, inodes int64) (string, error) {
	dir := filepath.Join(m.cfg.StateDir, "disk-templates")
	p := filepath.Join(dir, fmt.Sprintf("ext4-%s-%d-%d.img", diskTemplateVer, size, inodes))
	m.diskMu.Lock()
	defer m.diskMu.Unlock()
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: disk template: %w", err)
	}
	tmp := p + ".tmp"
	os.Remove(tmp)
	defer os.Remove(tmp)
	if err := m.mkfs(tmp, size, inodes); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("sandbox: disk template: %w", err)
	}
	// Templates of earlier versions are never used again.
	old, _ := filepath.Glob(filepath.Join(dir, "ext4-*.img"))
	for _, o := range old {
		if !strings.HasPrefix(filepath.Base(o), "ext4-"+diskTemplateVer+"-") {
			os.Remove(o)
		}
	}
	return p, nil
}

// mkfs makes a new image file p holding an empty ext4 file system.
func (m *Manager) mkfs(p string, size, inodes int64) error {
	mkfs, err := m.lookPath("mkfs.ext4")
	if err != nil {
		return noQuota("mkfs.ext4 (e2fsprogs) is not installed")
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("sandbox: disk image: %w", err)
	}
	err = f.Truncate(size)
	f.Close()
	if err != nil {
		return fmt.Errorf("sandbox: disk image: %w", err)
	}
	// No journal (the layer is scratch space), nothing reserved for root,
	// no blocks reserved to grow the file system online (nothing resizes
	// a sandbox's disk; they were three quarters of what each sandbox's
	// copy of the template wrote), and inode tables left unzeroed
	// (mounted with noinit_itable).
	out, err := exec.Command(mkfs, "-q", "-F", "-m", "0", "-O", "^has_journal,^resize_inode", "-N", fmt.Sprint(inodes),
		"-E", "nodiscard,lazy_itable_init=1", p).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sandbox: mkfs.ext4: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// noQuota is the error for a host that cannot enforce a disk quota.
func noQuota(why string) error {
	return bullpen.Errorf(bullpen.EUNSUPPORTED,
		"this host cannot enforce sandbox disk quotas: %s; install what is missing or turn disk quotas off (Config.DiskQuotaOff)", why)
}

// mountDisk mounts the sandbox's disk image at mnt (unless it is mounted).
// The writable layer lives there: overlay on the host's file system
// cannot enforce a quota.
func (m *Manager) mountDisk(img, mnt string) error {
	if isMounted(mnt) {
		return nil
	}
	return m.mountNewDisk(img, mnt)
}

// mountNewDisk mounts the disk image at mnt, which is not a mount point
// (a fresh sandbox: no need to read the host's mount table).
func (m *Manager) mountNewDisk(img, mnt string) error {
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		return fmt.Errorf("sandbox: disk mount point: %w", err)
	}
	dev, loop, err := m.attachLoop(img)
	if err != nil {
		return err
	}
	defer loop.Close() // autoclear: the loop device goes away with the mount
	if err := unix.Mount(dev, mnt, "ext4", unix.MS_NOSUID|unix.MS_NODEV, "noinit_itable"); err != nil {
		return fmt.Errorf("sandbox: mount disk: %w", err)
	}
	return nil
}

// attachLoop binds file to a free loop device with autoclear set.
func (m *Manager) attachLoop(file string) (string, *os.File, error) {
	back, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: open disk image: %w", err)
	}
	defer back.Close()
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return "", nil, noQuota(fmt.Sprintf("no loop devices (%v)", err))
	}
	defer ctl.Close()
	// Concurrent creates (a burst) would be handed the same free device
	// and all but one get EBUSY, then back off and try again: a burst of
	// 100 spent more time asleep there than attaching. This Manager's
	// attaches take turns instead; against other processes' it still
	// tries again, backing off a little, as losetup does.
	m.loopMu.Lock()
	defer m.loopMu.Unlock()
	for try := 0; try < 200; try++ {
		if try > 0 {
			time.Sleep(time.Duration(min(try, 50)) * 100 * time.Microsecond)
		}
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return "", nil, fmt.Errorf("sandbox: loop get free: %w", err)
		}
		dev := fmt.Sprintf("/dev/loop%d", n)
		f, err := os.OpenFile(dev, os.O_RDWR, 0)
		if err != nil {
			return "", nil, fmt.Errorf("sandbox: open %s: %w", dev, err)
		}
		cfg := unix.LoopConfig{Fd: uint32(back.Fd())}
		cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR
		if err := unix.IoctlLoopConfigure(int(f.Fd()), &cfg); err != nil {
			f.Close()
			if errors.Is(err, unix.EBUSY) {
				continue
			}
			return "", nil, fmt.Errorf("sandbox: loop configure: %w", err)
		}
		return dev, f, nil
	}
	return "", nil, errors.New("sandbox: no free loop device")
}
