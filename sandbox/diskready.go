package sandbox

import (
	"os"
	"path/filepath"
)

// readyDisks is how many sandbox directories with a default-size disk the
// Manager keeps made and mounted ahead of time: attaching a loop device
// and mounting ext4 takes several milliseconds (more under load) that
// Create then does not wait for. Eight cover bursts and let back-to-back
// creates (sandbox-bench) outrun the filler less often than two did; each
// costs about 150 KiB of kernel memory and about 150 KiB of disk.
const readyDisks = 8

// takeReadyDisk moves a prepared directory (disk.img and its mounted
// disk) to dst, a new sandbox's directory; false when none is ready. A
// directory moves with the mount inside it.
func (m *Manager) takeReadyDisk(dst string) bool {
	var name string
	select {
	case name = <-m.ready:
	default:
		return false
	}
	defer m.kickReady()
	if err := os.Rename(filepath.Join(m.readyDir, name), dst); err != nil {
		m.dropReady(name) // provision calls this in the mount namespace
		return false
	}
	return true
}

func (m *Manager) kickReady() {
	select {
	case m.refill <- struct{}{}:
	default:
	}
}

// fillReady keeps readyDisks prepared until the Manager closes. If
// preparing fails (the host cannot make disks), it stops trying: Create
// then makes its disk itself and reports the error.
func (m *Manager) fillReady() {
	defer m.wg.Done()
	for {
		for len(m.ready) < cap(m.ready) {
			id := newID()
			if err := m.mnt.do(func() error { return m.prepareReady(id) }); err != nil {
				_ = m.mnt.do(func() error { m.dropReady(id); return nil })
				return
			}
			m.ready <- id
		}
		select {
		case <-m.stop:
			return
		case <-m.refill:
		}
	}
}

func (m *Manager) prepareReady(id string) error {
	dir := filepath.Join(m.readyDir, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	img := filepath.Join(dir, "disk.img")
	if err := m.newDisk(img, m.cfg.DefaultDiskBytes, m.defaultInodes(m.cfg.DefaultDiskBytes)); err != nil {
		return err
	}
	disk := filepath.Join(dir, "disk")
	if err := m.mountNewDisk(img, disk); err != nil {
		return err
	}
	// The overlay's layer directories too: the first writes to a fresh
	// ext4 read its bitmaps and inode table through the loop device, a
	// round trip to the loop worker each (milliseconds on a busy host).
	return makeLayerDirs(disk, int(m.cfg.IDMapBase))
}

// dropReady unmounts and removes a prepared directory.
func (m *Manager) dropReady(id string) {
	dir := filepath.Join(m.readyDir, id)
	_ = unmountAll(filepath.Join(dir, "disk"))
	os.RemoveAll(dir)
}

// clearReady removes every prepared directory: at Close (after fillReady
// ended) and at New (left by a process that did not close).
func (m *Manager) clearReady() {
	for {
		select {
		case id := <-m.ready:
			m.dropReady(id)
			continue
		default:
		}
		break
	}
	ents, _ := os.ReadDir(m.readyDir)
	for _, e := range ents {
		m.dropReady(e.Name())
	}
}
