package dev.lease.faults.workload;

import java.time.Duration;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.faults.mutants.Mutant;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.R2dbcFence;
import dev.lease.fence.StaleTokenException;

/**
 * The R2DBC workload of a {@link Ledger}: each write is one reactive transaction on r2dbc-postgresql that advances
 * {@link R2dbcFence} with the token of the lease bound to the writing thread and logs the write, as a reactive
 * service's write would; a refusal rolls both back. The worker blocks on it (its thread is the leased section, and an
 * interrupt while it waits cancels the transaction, like a lost reactive lease cancels its upstream). Under the fence
 * mutant the fence moves to any token without comparing.
 */
final class R2dbcLedgerWrites implements Ledger.Writes {

    /** Longer than any fault a scenario injects into the database; the scenarios do not freeze this link. */
    private static final Duration WRITE_BOUND = Duration.ofSeconds(60);

    private final DatabaseClient db;
    private final TransactionalOperator transactions;
    private final R2dbcFence fence;
    private final boolean broken;
    private final String resource;

    R2dbcLedgerWrites(int port, String resource) {
        this.db = DatabaseClient.create(new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                .host("localhost").port(port).username("postgres").database("postgres").build()));
        this.transactions = TransactionalOperator.create(new R2dbcTransactionManager(db.getConnectionFactory()));
        this.fence = new R2dbcFence(db, (table, rejection) -> { }, Ledger.IDLE_TIMEOUT);
        this.broken = Mutant.active() == Mutant.FENCE;
        this.resource = resource;
    }

    @Override
    public boolean write(long token, long writeId) {
        FencingToken held = LeaseContext.token();
        if (held.value() != token) {
            throw new IllegalStateException("the ledger was asked to write token " + token + " but the thread holds "
                    + held);
        }
        Boolean accepted = advance(held)
                .then(db.sql("INSERT INTO fault_ledger (resource, token, write_id) VALUES (:resource, :token, :write)")
                        .bind("resource", resource).bind("token", token).bind("write", writeId).then())
                .thenReturn(true)
                .as(transactions::transactional)
                .onErrorResume(StaleTokenException.class, stale -> Mono.just(false))
                .block(WRITE_BOUND);
        return Boolean.TRUE.equals(accepted);
    }

    private Mono<Void> advance(FencingToken token) {
        if (!broken) {
            return fence.advance(resource, token);
        }
        return db.sql("INSERT INTO " + JdbcFence.TABLE + " (resource, fence) VALUES (:resource, :fence)"
                + " ON CONFLICT (resource) DO UPDATE SET fence = EXCLUDED.fence")
                .bind("resource", resource).bind("fence", token.value()).then();
    }
}
