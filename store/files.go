package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes of an embedded database at rest: it holds webhook secrets, key
// hashes and customers' names, emails and phone numbers, so only the user
// running Boxoffice may read it.
const (
	// DirMode is the mode of a database directory Boxoffice creates, and of
	// the default one (./data) whatever made it.
	DirMode fs.FileMode = 0o700
	// FileMode is the mode of the database file and its -wal, -shm and
	// -journal side files.
	FileMode fs.FileMode = 0o600
)

// sideFiles are the files SQLite keeps beside a database.
var sideFiles = []string{"", "-wal", "-shm", "-journal"}

// prepareSQLiteFiles makes the database's directory and file private before
// SQLite opens them: a directory it creates is DirMode (so is the default
// ./data, which releases before this one created world-readable, and
// which only Boxoffice uses); the database file is created, or tightened,
// to FileMode, and so is any side file already there. SQLite gives the
// side files it creates later the database file's mode. A directory the
// operator made elsewhere keeps its mode: it may be shared (/tmp, a
// volume), and its files are private anyway. Modes are set with chmod, so
// the process's umask cannot widen or narrow them.
func prepareSQLiteFiles(path string) error {
	dir := filepath.Dir(path)
	_, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, DirMode); err != nil {
			return fmt.Errorf("create database directory: %w", err)
		}
		if err := os.Chmod(dir, DirMode); err != nil {
			return fmt.Errorf("database directory %s: %w", dir, err)
		}
	case err != nil:
		return fmt.Errorf("database directory %s: %w", dir, err)
	case filepath.Clean(path) == filepath.Clean(defaultSQLitePath):
		if err := tighten(dir, DirMode); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return tightenSQLiteFiles(path)
}

// tightenSQLiteFiles sets FileMode on the database file and each side file
// that exists.
func tightenSQLiteFiles(path string) error {
	for _, suffix := range sideFiles {
		if err := tighten(path+suffix, FileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// tighten sets mode on name when its permissions differ. A file of another
// user that this one may use but not chmod is left as it is: refusing to
// start would not make it private.
func tighten(name string, mode fs.FileMode) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	if st.Mode().Perm() == mode {
		return nil
	}
	if err := os.Chmod(name, mode); err != nil && !errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("make %s private: %w", name, err)
	}
	return nil
}
