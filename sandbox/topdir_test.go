package sandbox

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The directories that hold one tree per sandbox are marked for ext4's
// allocator to spread those trees over the file system's groups.
func TestSandboxTreesSpread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	checked := 0
	for _, d := range []string{e.m.sbDir, e.m.readyDir, e.m.tmpDir, e.m.runDir} {
		var st unix.Statfs_t
		if err := unix.Statfs(d, &st); err != nil {
			t.Fatal(err)
		}
		if st.Type != unix.EXT4_SUPER_MAGIC {
			continue
		}
		fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		if flags&fsTopdirFL == 0 {
			t.Errorf("%s: flags %#x, want the top-directory flag (+T)", d, flags)
		}
		checked++
	}
	if checked == 0 {
		t.Skip("no state or run directory on ext4 here")
	}
}

// A disk template reserves no blocks for growing online (three quarters
// of what each sandbox's copy wrote), and making one removes the
// templates of earlier versions.
func TestDiskTemplateSmallAndCurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.cfg.StateDir, "disk-templates")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "ext4-v1-1073741824-65536.img")
	if err := os.WriteFile(stale, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	size, inodes := int64(256<<20), int64(16384)
	p, err := e.m.diskTemplate(size, inodes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a template of an earlier version is still there: %v", err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sb := make([]byte, 1024)
	if _, err := f.ReadAt(sb, 1024); err != nil {
		t.Fatal(err)
	}
	if magic := binary.LittleEndian.Uint16(sb[0x38:]); magic != 0xEF53 {
		t.Fatalf("template superblock magic %#x, want ext4's", magic)
	}
	const compatResizeInode = 0x10
	if compat := binary.LittleEndian.Uint32(sb[0x5C:]); compat&compatResizeInode != 0 {
		t.Errorf("template has resize_inode (compat features %#x)", compat)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if used := st.Blocks * 512; used > 256<<10 {
		t.Errorf("template holds %d KiB of data, want at most 256", used>>10)
	}
}
