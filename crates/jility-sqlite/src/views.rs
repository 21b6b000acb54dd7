//! Saved views in SQLite ([`ViewsTx`]).

use rusqlite::{Row, params};

use jility_core::store::{NewView, StoreResult, ViewRow, ViewsTx};

use crate::rows::{Tx, db};

const VIEW_COLUMNS: &str = "id, name, query, owner, shared, created_at";

fn view_row(row: &Row<'_>) -> rusqlite::Result<ViewRow> {
    Ok(ViewRow {
        id: row.get(0)?,
        name: row.get(1)?,
        query: row.get(2)?,
        owner: row.get(3)?,
        shared: row.get::<_, i64>(4)? != 0,
        created_at: row.get(5)?,
    })
}

impl ViewsTx for Tx<'_> {
    fn views(&mut self, owner: &str) -> StoreResult<Vec<ViewRow>> {
        let mut stmt = self
            .tx
            .prepare_cached(&format!(
                "SELECT {VIEW_COLUMNS} FROM views WHERE owner = ?1 OR shared = 1 \
                 ORDER BY name COLLATE NOCASE, id"
            ))
            .map_err(db)?;
        let rows = stmt.query_map([owner], view_row).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    fn insert_view(&mut self, view: &NewView<'_>) -> StoreResult<ViewRow> {
        self.tx
            .prepare_cached(&format!(
                "INSERT INTO views (name, query, owner, shared, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5) RETURNING {VIEW_COLUMNS}"
            ))
            .map_err(db)?
            .query_row(
                params![
                    view.name,
                    view.query,
                    view.owner,
                    i64::from(view.shared),
                    view.at
                ],
                view_row,
            )
            .map_err(db)
    }

    fn delete_view(&mut self, id: i64) -> StoreResult<bool> {
        let n = self
            .tx
            .execute("DELETE FROM views WHERE id = ?1", [id])
            .map_err(db)?;
        Ok(n > 0)
    }
}
