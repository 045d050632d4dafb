package store

// ExecSQL runs a statement, for tests that check migrations' SQL.
func (db *DB) ExecSQL(sql string) error { return db.gdb.Exec(sql).Error }

// EventActors returns each stored event's type, payload and actor_id.
func (db *DB) EventActors() ([][3]any, error) {
	var rows []eventRow
	if err := db.gdb.Order("seq").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([][3]any, len(rows))
	for i, r := range rows {
		out[i] = [3]any{r.Type, r.Payload, r.ActorID}
	}
	return out, nil
}
