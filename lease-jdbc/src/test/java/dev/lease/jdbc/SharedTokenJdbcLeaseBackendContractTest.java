package dev.lease.jdbc;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.jdbc.JdbcLeaseBackend.JdbcGrant;
import dev.lease.jdbc.JdbcLeaseBackend.Tokens;

/**
 * The contract suite with {@code lease.jdbc.token: shared} and idle rows deleted, plus what shared tokens promise:
 * tokens keep rising across the deletion and re-creation of a name's row, and deletion never takes a held row. On H2,
 * PostgreSQL and MariaDB, in a table used by this mode alone.
 */
@EnumSource(value = JdbcVariant.class, names = {"H2_SHARED_TOKENS", "POSTGRESQL_SHARED_TOKENS",
    "MARIADB_SHARED_TOKENS"})
class SharedTokenJdbcLeaseBackendContractTest extends JdbcLeaseBackendContract {

    /** Grants each thread of the randomized tests tries. */
    private static final int ITERATIONS = 150;

    /** Rows free for this long are deleted by {@link JdbcLeaseBackend#deleteIdleRows()}. */
    private static final Duration IDLE = JdbcVariant.IDLE;

    /**
     * Idle rows go in statements of at most {@link IdleRowSweeper#BATCH} rows, each committed on its own, on a
     * thread of the backend (not a grant's), which its close ends.
     */
    @Test
    void idleRowsAreDeletedInBatchesOnAThreadOfTheBackendThatCloseEnds() throws Exception {
        String prefix = uniqueName() + "-idle-";
        int count = 2 * IdleRowSweeper.BATCH + 5;
        JdbcTemplate admin = new JdbcTemplate(dataSource());
        for (int i = 0; i < count; i++) {
            admin.update("INSERT INTO " + table() + " (name, owner, token, expires_at) VALUES (?, NULL, 1, "
                    + dialect().nowPlusMillis() + ")", prefix + i, -Duration.ofMinutes(1).toMillis());
        }
        List<String> prepared = Collections.synchronizedList(new ArrayList<>());
        JdbcLeaseBackend sweeping = new JdbcLeaseBackend(preparedSql(dataSource(), prepared), table(),
                Tokens.SHARED, IDLE);
        sweeping.sweepEvery(Duration.ofMillis(50));
        try {
            assertThat(sweeping.sweepingIdleRows()).as("deleting before the first grant").isFalse();
            sweeping.release(grant(sweeping, uniqueName(), seconds(30)).orElseThrow());
            assertThat(sweeping.sweepingIdleRows()).as("deleting after the first grant").isTrue();
            await("idle rows deleted").atMost(seconds(30))
                    .until(() -> admin.queryForObject("SELECT COUNT(*) FROM " + table() + " WHERE name LIKE ?",
                            Integer.class, prefix + "%") == 0);
            List<String> deletions;
            synchronized (prepared) {
                deletions = prepared.stream().filter(sql -> sql.startsWith("DELETE")).toList();
            }
            assertThat(deletions).as("deleting statements").hasSizeGreaterThanOrEqualTo(3)
                    .allMatch(sql -> sql.contains("LIMIT ?") || sql.contains("FETCH FIRST ? ROWS ONLY"), "bounded");
        }
        finally {
            sweeping.close();
        }
        assertThat(sweeping.sweepingIdleRows()).as("deleting after close").isFalse();
    }

    /** Replaces the per-name version: with a shared counter, two names never get the same token. */
    @Override
    void namesThatDifferOnlyInCaseAreTwoLeasesWithTokensOfTheirOwn() throws Exception {
    }

    @Test
    void namesThatDifferOnlyInCaseAreTwoLeases() throws Exception {
        String upper = uniqueName() + "-CaseJob";
        String lower = uniqueName() + "-casejob";
        var upperHeld = grant(backend(), upper, seconds(30)).orElseThrow();
        var lowerHeld = grant(secondBackend(), lower, seconds(30))
                .orElseThrow(() -> new AssertionError("'" + lower + "' is busy while '" + upper + "' is held"));
        assertThat(lowerHeld.token().getAsLong()).isGreaterThan(upperHeld.token().getAsLong());
        backend().release(upperHeld);
        secondBackend().release(lowerHeld);
    }

    @Test
    void tokensKeepRisingAcrossTheDeletionAndReCreationOfARow() throws Exception {
        String name = uniqueName();
        JdbcLeaseBackend leases = (JdbcLeaseBackend) backend();
        long last = 0;
        for (int round = 0; round < 3; round++) {
            var g = grant(leases, name, seconds(30)).orElseThrow();
            assertThat(g.value()).as("token of round %d", round).isGreaterThan(last);
            last = g.value();
            leases.release(g);
            makeIdle(name);
            assertThat(leases.deleteIdleRows()).as("rows deleted").isPositive();
            assertThat(rows(name)).as("rows of the idle name after round %d", round).isZero();
        }
    }

    /**
     * A row deleted under shared tokens, then re-created by an instance on per-name tokens (mid-rollout, or after a
     * switch back): the new row starts at the table's highest token, so the name's tokens keep rising. Deleting rows
     * with per-name tokens stays refused: a deleted row may carry the highest token of the table.
     */
    @Test
    void aRowDeletedUnderSharedTokensIsReCreatedAbovePerNameTokens() throws Exception {
        String name = uniqueName();
        JdbcLeaseBackend leases = (JdbcLeaseBackend) backend();
        JdbcTemplate admin = new JdbcTemplate(dataSource());
        var issued = grant(leases, name, seconds(30)).orElseThrow();
        leases.release(issued);
        // The name's row and the counter are far ahead of anything per-name counting alone would reach.
        admin.update("UPDATE " + table() + " SET token = token + 9000 WHERE name = ? OR name = ?", name,
                TokenCounter.ROW);
        long highest = issued.value() + 9000;
        makeIdle(name);
        assertThat(leases.deleteIdleRows()).as("rows deleted").isPositive();
        assertThat(rows(name)).isZero();

        JdbcLeaseBackend perName = new JdbcLeaseBackend(dataSource(), table());
        var again = grant(perName, name, seconds(30)).orElseThrow();
        assertThat(again.value()).as("token after re-creation by a per-name instance").isGreaterThan(highest);
        perName.release(again);
        var next = grant(leases, name, seconds(30)).orElseThrow();
        assertThat(next.value()).as("token of the shared instance afterwards").isGreaterThan(again.value());
        leases.release(next);

        assertThatThrownBy(() -> new JdbcLeaseBackend(dataSource(), table(), Tokens.PER_NAME, Duration.ofHours(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease.jdbc.delete-idle-after").hasMessageContaining("lease.jdbc.token: shared");
    }

    @Test
    void deletionNeverTakesAHeldRowNorTheCounter() throws Exception {
        String name = uniqueName();
        JdbcLeaseBackend leases = (JdbcLeaseBackend) backend();
        var held = grant(leases, name, Duration.ofHours(1)).orElseThrow();
        var expired = grant(leases, name + "-expired", seconds(30)).orElseThrow();
        // Expired a minute ago on the database clock: idle for longer than 1 ms, not yet for an hour. (Expired "now",
        // a deletion within the same millisecond on a fast H2 found nothing idle yet.)
        makeIdle(expired.name());
        JdbcLeaseBackend slow = new JdbcLeaseBackend(dataSource(), table(), Tokens.SHARED, Duration.ofHours(1));
        slow.deleteIdleRows();
        assertThat(rows(expired.name())).as("expired, not yet idle for an hour").isEqualTo(1);
        leases.deleteIdleRows();
        assertThat(rows(expired.name())).as("expired, idle for longer than 1 ms").isZero();
        assertThat(rows(name)).isEqualTo(1);
        assertThat(rows(TokenCounter.ROW)).as("the counter row").isEqualTo(1);
        assertThat(leases.renew(held)).isTrue();
        assertThat(grant(secondBackend(), name, seconds(30))).as("still busy").isEmpty();
        leases.release(held);
    }

    /** Rows with per-name tokens from before the switch, and a counter behind them: tokens still rise. */
    @Test
    void switchingATableFromPerNameTokensKeepsItsTokensRising() throws Exception {
        String name = uniqueName();
        JdbcLeaseBackend perName = new JdbcLeaseBackend(dataSource(), table());
        long before = 0;
        for (int i = 0; i < 3; i++) {
            var g = grant(perName, name, seconds(30)).orElseThrow();
            before = g.value();
            perName.release(g);
        }
        JdbcTemplate admin = new JdbcTemplate(dataSource());
        admin.update("UPDATE " + table() + " SET token = ? WHERE name = ?", before + 1000, name);
        // A counter far behind this name's row (created before the row's tokens grew).
        // Rows are kept here: a deletion would make the name's row new, and the counter, not the row, decide.
        JdbcLeaseBackend keeping = new JdbcLeaseBackend(dataSource(), table(), Tokens.SHARED, null);
        keeping.release(grant(keeping, name + "-other", seconds(30)).orElseThrow());
        admin.update("UPDATE " + table() + " SET token = 1 WHERE name = ?", TokenCounter.ROW);

        var g = grant(keeping, name, seconds(30)).orElseThrow();
        assertThat(g.value()).isGreaterThan(before + 1000);
        keeping.release(g);
    }

    /**
     * Seeded random interleaving of grants, releases and deletions of idle rows by several threads on two backends,
     * over a few names: the tokens of each name, in the order its holders held them, strictly rise, and no token is
     * ever issued twice.
     */
    @Test
    void tokensRiseUnderARandomInterleavingOfGrantsReleasesAndDeletions() throws Exception {
        long seed = Long.getLong("lease-test.seed", System.nanoTime());
        List<String> names = List.of(uniqueName() + "-a", uniqueName() + "-b", uniqueName() + "-c");
        Map<String, List<Long>> held = new HashMap<>();
        names.forEach(n -> held.put(n, new ArrayList<>()));
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService threads = Executors.newFixedThreadPool(5);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Random random = new Random(seed + t);
                JdbcLeaseBackend leases = (JdbcLeaseBackend) (t % 2 == 0 ? backend() : secondBackend());
                work.add(threads.submit(() -> {
                    for (int i = 0; i < ITERATIONS; i++) {
                        String name = names.get(random.nextInt(names.size()));
                        Optional<JdbcGrant> g = grant(leases, name, seconds(30));
                        if (g.isPresent()) {
                            synchronized (held) {
                                held.get(name).add(g.get().value());
                            }
                            if (random.nextBoolean()) {
                                Thread.yield();
                            }
                            leases.release(g.get());
                        }
                    }
                    return null;
                }));
            }
            Future<?> sweeper = threads.submit(() -> {
                while (!stop.get()) {
                    ((JdbcLeaseBackend) backend()).deleteIdleRows();
                }
                return null;
            });
            for (Future<?> f : work) {
                f.get(2, TimeUnit.MINUTES);
            }
            stop.set(true);
            sweeper.get(1, TimeUnit.MINUTES);
        }
        finally {
            stop.set(true);
            threads.shutdownNow();
        }
        Set<Long> all = new HashSet<>();
        for (String name : names) {
            List<Long> tokens = held.get(name);
            assertThat(tokens).as("grants of %s (seed %d)", name, seed).isNotEmpty();
            assertStrictlyIncreasing(tokens, name, seed);
            tokens.forEach(token -> assertThat(all.add(token)).as("token %d issued once (seed %d)", token, seed)
                    .isTrue());
        }
    }

    private static void assertStrictlyIncreasing(List<Long> tokens, String name, long seed) {
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d of %s after %s (seed %d)", i, name, tokens.subList(0, i), seed)
                    .isGreaterThan(tokens.get(i - 1));
        }
    }

    /**
     * A shared grant stopped by a concurrency failure frees the row it took; the freeing statement can itself be the
     * victim of the next deadlock (MariaDB, with idle rows being deleted, did so on CI), and is then run again rather
     * than failing the acquire and leaving the row to the engine's abandon. The grant is stopped by a deadlock that
     * outlasts the retries of its token's statement; the freeing statement is a victim as often as it may be and
     * still succeed. Both failures are the database's own kind (SQLSTATE 40001, MySQL's deadlock code), raised before
     * the statement runs.
     */
    @Test
    void aGrantWhoseFreeingStatementIsADeadlockVictimStillFreesItsRowAndIsBusy() throws Exception {
        String name = uniqueName();
        JdbcLeaseBackend plain = (JdbcLeaseBackend) backend();
        // The counter row exists, so that the grant below goes straight to take, draw, set.
        plain.release(grant(plain, uniqueName() + "-counter", seconds(30)).orElseThrow());
        Map<String, Integer> victims = new ConcurrentHashMap<>(Map.of("set token",
                Call.VICTIM_ATTEMPTS, "free", Call.VICTIM_ATTEMPTS - 1));
        List<String> failed = Collections.synchronizedList(new ArrayList<>());
        JdbcLeaseBackend victim = new JdbcLeaseBackend(new PausingDataSource(dataSource(), sql -> {
            String step = sql.contains("SET token = ?") ? "set token" : sql.contains("SET owner = NULL") ? "free" : null;
            if (step != null && victims.merge(step, -1, Integer::sum) >= 0) {
                failed.add(step);
                throw new java.sql.SQLTransactionRollbackException("Deadlock found when trying to get lock; try "
                        + "restarting transaction (injected before " + step + ")", "40001", 1213);
            }
        }), table(), Tokens.SHARED, IDLE);
        victim.sweepEvery(Duration.ofHours(1));

        assertThat(grant(victim, name, seconds(30))).as("a grant stopped by a deadlock is busy, not an error")
                .isEmpty();
        List<String> expected = new ArrayList<>(Collections.nCopies(Call.VICTIM_ATTEMPTS, "set token"));
        expected.addAll(Collections.nCopies(Call.VICTIM_ATTEMPTS - 1, "free"));
        assertThat(failed).as("the failures injected").isEqualTo(expected);
        JdbcGrant next = grant(plain, name, seconds(30))
                .orElseThrow(() -> new AssertionError("the row was left held by the stopped grant"));
        plain.release(next);
    }

    /**
     * The interleaving that issued a lower token when a grant drew its token before taking the row: grant A finds no
     * row and draws a floor for the row it will insert, then stalls; grant E draws its token, then stalls; grant B
     * inserts the row, takes it with a higher token, releases it, and the idle row is deleted; A inserts its row
     * with the old floor and stalls again; E wakes and took that row with a token lower than B's. Each pause is held
     * by a gate before a chosen statement, so the order is exactly this one on every run.
     */
    @Test
    void aGrantStalledWhileTheRowWasDeletedAndReCreatedNeverIssuesALowerToken() throws Exception {
        String name = uniqueName();
        JdbcLeaseBackend plain = (JdbcLeaseBackend) backend();
        // The counter row exists, so that the only INSERT of A is the one of the name's row.
        plain.release(grant(plain, uniqueName() + "-counter", seconds(30)).orElseThrow());
        Gate beforeInsert = new Gate("A before inserting the name's row");
        Gate afterInsert = new Gate("A after inserting the name's row");
        Gate late = new Gate("E before taking the row");
        AtomicBoolean inserted = new AtomicBoolean();
        JdbcLeaseBackend a = new JdbcLeaseBackend(new PausingDataSource(dataSource(), sql -> {
            if (inserted.get()) {
                afterInsert.pass();
            }
            else if (sql.startsWith("INSERT")) {
                beforeInsert.pass();
                inserted.set(true);
            }
        }), table(), Tokens.SHARED, IDLE);
        JdbcLeaseBackend e = new JdbcLeaseBackend(new PausingDataSource(secondDataSource(), sql -> {
            if (sql.contains("SET owner = ?")) {
                late.pass();
            }
        }), table(), Tokens.SHARED, IDLE);
        a.sweepEvery(Duration.ofHours(1));
        e.sweepEvery(Duration.ofHours(1));
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<Optional<JdbcGrant>> byA = threads.submit(() -> grant(a, name, seconds(30)));
            beforeInsert.awaitReached();
            Future<Optional<JdbcGrant>> byE = threads.submit(() -> grant(e, name, seconds(30)));
            late.awaitReached();

            JdbcGrant b = grant(plain, name, seconds(30)).orElseThrow(() -> new AssertionError("B not granted"));
            plain.release(b);
            makeIdle(name);
            assertThat(plain.deleteIdleRows()).as("rows deleted").isPositive();
            assertThat(rows(name)).as("rows of the idle name").isZero();

            beforeInsert.open();
            afterInsert.awaitReached();
            late.open();
            Optional<JdbcGrant> eGrant = byE.get(1, TimeUnit.MINUTES);
            afterInsert.open();
            Optional<JdbcGrant> aGrant = byA.get(1, TimeUnit.MINUTES);

            eGrant.ifPresent(g -> assertThat(g.value()).as("E's token after B's %d", b.value())
                    .isGreaterThan(b.value()));
            aGrant.ifPresent(g -> assertThat(g.value()).as("A's token after B's %d", b.value())
                    .isGreaterThan(b.value()));
            assertThat(eGrant.isPresent() && aGrant.isPresent()).as("A and E both hold %s", name).isFalse();
            eGrant.ifPresent(e::release);
            aGrant.ifPresent(a::release);
        }
        finally {
            beforeInsert.open();
            afterInsert.open();
            late.open();
            threads.shutdownNow();
            a.close();
            e.close();
        }
    }

    /**
     * Seeded random pauses before every statement of concurrent grants, releases and deletions of idle rows (idle
     * after 1 ms, so that rows are deleted and re-created all the time), on two backends over a few names: each
     * name's tokens strictly rise in the order its holders held them, no token is issued twice, and a name never has
     * two holders at once. Pauses mostly short, a few long enough for a whole grant, release and deletion by others.
     */
    @Test
    void tokensRiseUnderRandomPausesBetweenTheStatementsOfGrantsReleasesAndDeletions() throws Exception {
        long seed = Long.getLong("lease-test.seed", System.nanoTime());
        ThreadLocal<Random> pauses = new ThreadLocal<>();
        PausingDataSource.BeforeExecute pause = sql -> {
            Random random = pauses.get();
            if (random == null) {
                return;
            }
            int roll = random.nextInt(100);
            if (roll < 4) {
                Thread.sleep(10 + random.nextInt(30));
            }
            else if (roll < 40) {
                Thread.sleep(random.nextInt(3));
            }
        };
        List<JdbcLeaseBackend> backends = new ArrayList<>();
        for (DataSource ds : List.of(dataSource(), secondDataSource(), dataSource())) {
            JdbcLeaseBackend backend = new JdbcLeaseBackend(new PausingDataSource(ds, pause), table(), Tokens.SHARED,
                    IDLE);
            backend.sweepEvery(Duration.ofHours(1));
            backends.add(backend);
        }
        List<String> names = List.of(uniqueName() + "-a", uniqueName() + "-b");
        Map<String, List<Long>> held = new HashMap<>();
        Map<String, Long> holder = new HashMap<>();
        List<String> overlaps = Collections.synchronizedList(new ArrayList<>());
        names.forEach(n -> held.put(n, new ArrayList<>()));
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService threads = Executors.newFixedThreadPool(5);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long threadSeed = seed + t;
                JdbcLeaseBackend leases = backends.get(t % 2);
                work.add(threads.submit(() -> {
                    Random random = new Random(threadSeed);
                    pauses.set(new Random(threadSeed * 31));
                    for (int i = 0; i < ITERATIONS; i++) {
                        String name = names.get(random.nextInt(names.size()));
                        Optional<JdbcGrant> g = grant(leases, name, seconds(30));
                        if (g.isEmpty()) {
                            continue;
                        }
                        long token = g.get().value();
                        synchronized (held) {
                            Long other = holder.putIfAbsent(name, token);
                            if (other != null) {
                                overlaps.add(name + ": " + token + " granted while " + other + " held");
                            }
                            held.get(name).add(token);
                        }
                        if (random.nextInt(4) == 0) {
                            Thread.sleep(random.nextInt(3));
                        }
                        synchronized (held) {
                            holder.remove(name, token);
                        }
                        leases.release(g.get());
                    }
                    return null;
                }));
            }
            Future<?> sweeper = threads.submit(() -> {
                pauses.set(new Random(seed - 1));
                while (!stop.get()) {
                    backends.get(2).deleteIdleRows();
                }
                return null;
            });
            for (Future<?> f : work) {
                f.get(5, TimeUnit.MINUTES);
            }
            stop.set(true);
            sweeper.get(1, TimeUnit.MINUTES);
        }
        finally {
            stop.set(true);
            threads.shutdownNow();
            backends.forEach(JdbcLeaseBackend::close);
        }
        assertThat(overlaps).as("two holders of a name at once (seed %d)", seed).isEmpty();
        Set<Long> all = new HashSet<>();
        for (String name : names) {
            List<Long> tokens = held.get(name);
            assertThat(tokens).as("grants of %s (seed %d)", name, seed).isNotEmpty();
            assertStrictlyIncreasing(tokens, name, seed);
            tokens.forEach(token -> assertThat(all.add(token)).as("token %d issued once (seed %d)", token, seed)
                    .isTrue());
        }
    }

    /** Holds the first thread that passes it until the test opens it. */
    private static final class Gate {

        private final String what;
        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch opened = new CountDownLatch(1);
        private final AtomicBoolean passed = new AtomicBoolean();

        Gate(String what) {
            this.what = what;
        }

        void pass() throws InterruptedException {
            if (passed.compareAndSet(false, true)) {
                reached.countDown();
                if (!opened.await(seconds(60).toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException(what + ": never opened");
                }
            }
        }

        void awaitReached() throws InterruptedException {
            assertThat(reached.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as(what + " reached").isTrue();
        }

        void open() {
            opened.countDown();
        }
    }

    private int rows(String name) {
        return new JdbcTemplate(dataSource()).queryForObject("SELECT COUNT(*) FROM " + table() + " WHERE name = ?",
                Integer.class, name);
    }

    /** Moves the row's expiry a minute into the past on the database clock, far beyond {@link #IDLE}. */
    private void makeIdle(String name) {
        new JdbcTemplate(dataSource()).update("UPDATE " + table() + " SET expires_at = " + dialect().nowPlusMillis()
                + " WHERE name = ?", -Duration.ofMinutes(1).toMillis(), name);
    }
}
