package store

// DoorMoveQuery exposes MoveAtDoor's statement to the plan tests.
var DoorMoveQuery = doorMoveQuery

// ManifestQuery is ManifestAfter's statement, as text.
func ManifestQuery(db *DB, env string, dateID int64, after ManifestCursor, limit int) string {
	return manifestQuery(db, env, dateID, after, limit).String()
}
