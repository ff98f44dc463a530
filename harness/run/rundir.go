package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/seqgate/seqgate/faults"
)

// The run directory is often reused (--out given twice) and may be shared, so nothing the run
// writes there is written through a symbolic link planted in its place: a link named ledger.jsonl.gz
// pointing at a file elsewhere would otherwise have that file overwritten. Files the run opens
// itself are opened with O_NOFOLLOW; before anything starts, every name of the layout is checked,
// which also covers files other packages write (schedule.json, db.log, pods/*.log, summary.json, summary.txt).
// O_EXCL is not used: a reused run directory's regular files are replaced, as before.

// runDirNames lists the files and directories a run creates in its directory (pods is the count).
func runDirNames(pods int) []string {
	names := []string{"pods", "run.log", "scenario.yaml", "ledger.jsonl.gz", "pools.json", "result.json",
		faults.ScheduleFile, faults.ScheduleFile + ".tmp", "db.log", "summary.json", "summary.txt"}
	for i := 1; i <= pods; i++ {
		names = append(names, filepath.Join("pods", fmt.Sprintf("pod-%d.log", i)))
	}
	return names
}

// checkRunDir refuses a run directory in which a name the run will write is a symbolic link.
func checkRunDir(dir string, pods int) error {
	for _, name := range runDirNames(pods) {
		st, err := os.Lstat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("run directory %s: %s is a symbolic link; the run does not write through links (remove it or choose another --out)", dir, name)
		}
	}
	return nil
}

// CreateFile creates or truncates name in the run directory dir, refusing (with an error naming
// it) to follow a symbolic link there.
func CreateFile(dir, name string, perm os.FileMode) (*os.File, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link; the run does not write through links", path)
	}
	return f, err
}

// writeFile is os.WriteFile through CreateFile.
func writeFile(dir, name string, data []byte, perm os.FileMode) error {
	f, err := CreateFile(dir, name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
