package dev.lease.fence;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDescription;
import dev.lease.core.LeaseEngine;
import dev.lease.core.LeaseEngineListener;
import dev.lease.core.LossCause;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.GrantFence;
import dev.lease.spi.LeaseBackend;

/**
 * Fence at grant and re-entry on a real database, in the README's quick-start shape: a fenced leased section whose
 * transaction advances the fence, then calls another section leased on the same name. The re-entered section must
 * complete with its lease intact and the fence advanced once: a second fence at grant in a transaction of its own
 * would wait for the row lock of the transaction it suspended (for ever on PostgreSQL, where nothing times out; on H2
 * until the lock timeout, which then cost the holder its valid lease). And no fence at grant waits longer than the
 * lease's validity for a row another transaction holds, such as a stale holder paused inside its fenced transaction.
 */
abstract class FenceAtGrantReentryTest {

    /** One DataSource object per database: transactions bind to it, a second instance would not join them. */
    protected abstract DataSource dataSource();

    private final InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
    private final List<String> losses = new CopyOnWriteArrayList<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private JdbcTemplate jdbc;
    private JdbcFence fence;
    private CountingFence counting;
    private TransactionTemplate transactions;
    private LeaseEngine engine;
    private LeaseSpec spec;
    private String resource;

    /** Creates the tables every test needs; subclasses call it once per database. */
    static void createTables(DataSource dataSource) {
        new JdbcFence(new JdbcTemplate(dataSource)).createSchema();
        new JdbcTemplate(dataSource).execute("CREATE TABLE IF NOT EXISTS reentry_account (id BIGINT PRIMARY KEY, "
                + "balance BIGINT NOT NULL, fence BIGINT)");
    }

    @BeforeEach
    void setUp(TestInfo info) {
        jdbc = new JdbcTemplate(dataSource());
        fence = new JdbcFence(jdbc);
        counting = new CountingFence(fence);
        transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        String name = "invoice-" + Math.abs(System.nanoTime() % 1_000_000_000);
        spec = LeaseSpec.of(name, LeaseKind.CORRECTNESS);
        resource = name + "-" + info.getTestMethod().orElseThrow().getName().substring(0, 12);
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        engine = LeaseEngine.builder(BackendRouter.of(routes)).grantFence(counting)
                .listeners(List.of(new LeaseEngineListener() {
                    @Override
                    public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
                        losses.add(lease.name() + " " + cause);
                    }
                })).build();
    }

    @AfterEach
    void tearDown() {
        engine.close();
        pool.shutdownNow();
    }

    @Test
    void reenteringInsideTheTransactionThatAdvancedTheFenceCompletesAndFencesOnce() throws Exception {
        String done = onAnotherThread(() -> engine.execute(spec.withFence(resource), outer -> transactions.execute(
                status -> {
                    fence.advance(resource, outer.token());
                    return engine.execute(spec.withFence(resource), inner -> {
                        assertThat(inner).isSameAs(outer);
                        fence.advance(resource, inner.token());
                        assertThat(inner.isValid()).as("the re-entered lease is valid").isTrue();
                        return "done";
                    });
                })));

        assertThat(done).isEqualTo("done");
        assertThat(losses).as("leases declared lost").isEmpty();
        assertThat(counting.calls).as("fence at grant calls").hasValue(1);
        assertThat(fence.current(resource)).hasValue(backend.lastToken(spec.name()).orElseThrow());
    }

    @Test
    void aReenteredSectionNamingAnotherResourceJoinsTheTransactionThatLockedIt() throws Exception {
        String other = resource + "-other";
        long token = onAnotherThread(() -> engine.execute(spec.withFence(resource), outer -> transactions.execute(
                status -> {
                    fence.advance(other, outer.token());
                    return engine.execute(spec.withFence(other), inner -> {
                        assertThat(committedFence(other)).as("joined: nothing committed yet").isNull();
                        return inner.token().value();
                    });
                })));

        assertThat(losses).isEmpty();
        assertThat(counting.calls).as("at grant, then on re-entry").hasValue(2);
        assertThat(fence.current(resource)).hasValue(token);
        assertThat(fence.current(other)).hasValue(token);
    }

    /** Without a transaction to join, a re-entered section's resource is fenced and committed before it runs. */
    @Test
    void aReenteredSectionOutsideATransactionFencesItsResourceInATransactionOfItsOwn() throws Exception {
        String other = resource + "-other";
        long token = onAnotherThread(() -> engine.execute(spec.withFence(resource),
                outer -> engine.execute(spec.withFence(other), inner -> {
                    assertThat(committedFence(other)).as("committed before the section ran")
                            .isEqualTo(inner.token().value());
                    return inner.token().value();
                })));

        assertThat(losses).isEmpty();
        assertThat(fence.current(other)).hasValue(token);
    }

    @Test
    void aFencedTableAdvanceAtGrantReenteredInsideTheTransactionThatWroteTheRowCompletes() throws Exception {
        long id = System.nanoTime();
        jdbc.update("INSERT INTO reentry_account (id, balance) VALUES (?, 0)", id);
        FencedTable accounts = fence.table("reentry_account", "id");

        long token = onAnotherThread(() -> engine.execute(spec, outer -> transactions.execute(status -> {
            accounts.advanceAtGrant(id, outer.token());
            accounts.update(id, outer.token(), Map.of("balance", 10));
            return engine.execute(spec, inner -> {
                accounts.advanceAtGrant(id, inner.token());
                accounts.update(id, inner.token(), Map.of("balance", 20));
                return inner.token().value();
            });
        })));

        assertThat(losses).isEmpty();
        assertThat(jdbc.queryForMap("SELECT balance, fence FROM reentry_account WHERE id = ?", id).values())
                .containsExactly(20L, token);
    }

    /**
     * A stale holder paused inside its own fenced transaction keeps the fence row locked: the successor's fence at
     * grant waits for it no longer than the successor's lease is valid, then says what it waited for.
     */
    @Test
    void aFenceAtGrantWaitingForAStaleHoldersRowLockGivesUpAtTheLeaseValidityAndSaysSo() throws Exception {
        Duration ttl = Duration.ofSeconds(2);
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch wakeUp = new CountDownLatch(1);
        Future<?> stale = holdTheLockOf(() -> fence.advance(resource, new FencingToken(spec.name(), 1)), locked, wakeUp);
        AtomicBoolean ran = new AtomicBoolean();
        try {
            Future<Object> successor = pool.submit(
                    () -> engine.execute(spec.withTtl(ttl).withFence(resource), lease -> ran.getAndSet(true)));

            assertThatThrownBy(() -> successor.get(ttl.plus(seconds(20)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the successor's fence at grant ended within its validity")
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(LeaseLostException.class).hasMessageContaining(spec.name())
                    .cause().isInstanceOf(CannotAcquireLockException.class)
                    .hasMessageContaining("Fence at grant of resource '" + resource + "' for lease '" + spec.name()
                            + "' (token " + backend.lastToken(spec.name()).orElseThrow() + ")")
                    .hasMessageContaining("gave up waiting for the lock on its row of lease_fence")
                    .hasMessageContaining("bounded by the lease's validity");
            assertThat(ran).as("the work ran").isFalse();
            assertThat(losses).containsExactly(spec.name() + " " + LossCause.FENCE_REFUSED);
            try (Lease next = engine.acquire(spec)) {
                assertThat(next.isValid()).as("the name was released at once").isTrue();
            }
        }
        finally {
            wakeUp.countDown();
            stale.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(fence.current(resource)).as("the stale holder's transaction rolled back").isEmpty();
    }

    /** The same bound when the application fences a row of its own table at grant, from inside its section. */
    @Test
    void aFencedTableAdvanceAtGrantWaitingForALockGivesUpAtTheValidityOfTheLeaseOfItsThread() throws Exception {
        long id = System.nanoTime();
        jdbc.update("INSERT INTO reentry_account (id, balance) VALUES (?, 0)", id);
        FencedTable accounts = fence.table("reentry_account", "id");
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch wakeUp = new CountDownLatch(1);
        Future<?> stale = holdTheLockOf(() -> accounts.update(id, new FencingToken(spec.name(), 1), Map.of()),
                locked, wakeUp);
        Duration ttl = Duration.ofSeconds(2);
        try {
            Future<Object> successor = pool.submit(() -> engine.execute(spec.withTtl(ttl), lease -> {
                accounts.advanceAtGrant(id, lease.token());
                return null;
            }));

            assertThatThrownBy(() -> successor.get(ttl.plus(seconds(20)).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(CannotAcquireLockException.class)
                    .hasMessageContaining("Fence at grant of row reentry_account[id=" + id + "] for lease '"
                            + spec.name() + "'")
                    .hasMessageContaining("gave up waiting for the lock on its row of reentry_account");
        }
        finally {
            wakeUp.countDown();
            stale.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Runs {@code write} in a transaction on another thread that keeps its locks until woken up, then rolls back. */
    private Future<?> holdTheLockOf(Runnable write, CountDownLatch locked, CountDownLatch wakeUp) throws Exception {
        Future<?> holder = pool.submit(() -> transactions.executeWithoutResult(status -> {
            write.run();
            locked.countDown();
            try {
                wakeUp.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            status.setRollbackOnly();
        }));
        assertThat(locked.await(seconds(20).toMillis(), TimeUnit.MILLISECONDS)).as("the stale holder wrote").isTrue();
        return holder;
    }

    /**
     * Runs the section on a pool thread and waits for it within a bound: the defect this test is for blocks the
     * thread for ever.
     */
    private <T> T onAnotherThread(java.util.concurrent.Callable<T> section) throws Exception {
        Future<T> result = pool.submit(section);
        try {
            return result.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw ex;
        }
    }

    /** What a connection outside this thread's transaction sees: only what was committed. */
    private Long committedFence(String fenced) {
        try (Connection connection = dataSource().getConnection();
                PreparedStatement read = connection.prepareStatement(
                        "SELECT fence FROM " + JdbcFence.TABLE + " WHERE resource = ?")) {
            read.setString(1, fenced);
            try (ResultSet row = read.executeQuery()) {
                return row.next() ? row.getLong(1) : null;
            }
        }
        catch (SQLException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Counts the engine's fence at grant calls, forwarding every one of them. */
    private static final class CountingFence implements GrantFence {

        final AtomicInteger calls = new AtomicInteger();
        private final GrantFence fence;

        CountingFence(GrantFence fence) {
            this.fence = fence;
        }

        @Override
        public void advanceAtGrant(String resource, FencingToken token) {
            calls.incrementAndGet();
            fence.advanceAtGrant(resource, token);
        }

        @Override
        public void advanceAtGrant(String resource, FencingToken token, Duration validity) {
            calls.incrementAndGet();
            fence.advanceAtGrant(resource, token, validity);
        }

        @Override
        public void advanceOnReentry(String resource, FencingToken token, Duration validity) {
            calls.incrementAndGet();
            fence.advanceOnReentry(resource, token, validity);
        }
    }
}
