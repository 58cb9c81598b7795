package dev.lease.samples.leader;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.FencingToken;
import dev.lease.fence.FencedTable;
import dev.lease.fence.JdbcFence;

/**
 * The {@code reminder_job} row that every batch goes through, fenced by the term's token, and the {@code outbox}
 * that the leader's {@link OutboxRelay} sends to Kafka from.
 */
@Repository
public class Reminders {

    /** The job's row in {@code reminder_job}, and the name of its election. */
    public static final String JOB = "invoice-reminders";

    private final JdbcTemplate jdbc;
    private final FencedTable jobRow;

    Reminders(JdbcTemplate jdbc, JdbcFence fence) {
        this.jdbc = jdbc;
        this.jobRow = fence.table("reminder_job", "name");
    }

    /** The last batch written, 0 before the first. */
    public long lastBatch() {
        Long last = jdbc.queryForObject("SELECT last_batch FROM reminder_job WHERE name = ?", Long.class, JOB);
        return last == null ? 0 : last;
    }

    /**
     * Writes a batch in one transaction: the job's row moves to {@code batch} under {@code token}, and the batch's
     * message goes into the outbox.
     *
     * @throws dev.lease.fence.StaleTokenException when a later term already wrote or fenced the job's row; nothing
     *         was written
     */
    @Transactional
    public void write(long batch, FencingToken token, String instance) {
        // First statement of the transaction: refused if a later term got here first.
        jobRow.update(JOB, token, Map.of("last_batch", batch, "last_run_by", instance));
        jdbc.update("INSERT INTO outbox (batch, written_by, token) VALUES (?, ?, ?)", batch, instance, token.value());
    }

    /**
     * Fence at grant: from now on the job's row refuses every token older than this term's, even before this term's
     * first write.
     *
     * @throws dev.lease.fence.StaleTokenException when a later term already fenced the row: this term is over
     */
    public void fenceAtGrant(FencingToken token) {
        jobRow.advanceAtGrant(JOB, token);
    }

    /** Messages not sent yet, oldest first. */
    public List<Message> unsent(int max) {
        return jdbc.query("SELECT id, batch, written_by, token, sent_by FROM outbox WHERE sent_by IS NULL ORDER BY id "
                + "FETCH FIRST " + max + " ROWS ONLY", (rs, i) -> message(rs));
    }

    /**
     * Marks messages sent by {@code instance}'s relay, after its Kafka transaction committed, in one transaction
     * fenced by the term's token: the job's row, which every term fences at its grant, refuses a former term, so a
     * relay that paused after its commit cannot mark messages once a later term started. Messages marked already are
     * left as they are.
     *
     * @throws dev.lease.fence.StaleTokenException when a later term fenced the job's row; nothing was marked
     */
    @Transactional
    public void markSent(List<Long> ids, String instance, FencingToken token) {
        jobRow.update(JOB, token, Map.of());
        for (long id : ids) {
            jdbc.update("UPDATE outbox SET sent_by = ? WHERE id = ? AND sent_by IS NULL", instance, id);
        }
    }

    /** Every message, oldest first. */
    public List<Message> outbox() {
        return jdbc.query("SELECT id, batch, written_by, token, sent_by FROM outbox ORDER BY id",
                (rs, i) -> message(rs));
    }

    private static Message message(ResultSet rs) throws SQLException {
        return new Message(rs.getLong("id"), rs.getLong("batch"), rs.getString("written_by"), rs.getLong("token"),
                rs.getString("sent_by"));
    }

    /**
     * A row of the outbox.
     *
     * @param batch the reminder batch; more than one message for a batch means it was written (and sent) twice
     * @param writtenBy the instance that wrote it
     * @param token the term token it was written with
     * @param sentBy the instance whose relay sent it, or null while unsent
     */
    public record Message(long id, long batch, String writtenBy, long token, String sentBy) {
    }
}
