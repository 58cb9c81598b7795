package dev.lease.benchmarks;

import java.sql.Types;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.once.JdbcOnceStore;
import dev.lease.sql.SqlDialect;

/**
 * The rows of {@code @Once}'s cost ({@code --only=once}): a job's transaction (one insert, committed) with the key
 * recorded by {@link JdbcOnceStore#runOnce}, what the {@code @Once} interceptor calls, against the same transaction
 * opened by a {@link TransactionTemplate} without a key, and with the key's insert alone (the one extra statement
 * the goal allows); time per transaction and round trips (statements + commit)
 * per transaction, counted by a {@link CountingDataSource}. On an in-memory H2 and on PostgreSQL.
 */
final class OnceCost {

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;
    private final AtomicLong keys = new AtomicLong();

    OnceCost(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
    }

    void run() throws Exception {
        if (harness.stores("jdbc")) {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL("jdbc:h2:mem:once-cost;DB_CLOSE_DELAY=-1");
            // Pooled as an application's DataSource is, like the PostgreSQL one.
            HikariConfig config = new HikariConfig();
            config.setDataSource(h2);
            config.setMaximumPoolSize(2);
            measure("H2 (in-memory)", SqlDialect.H2, harness.own(new HikariDataSource(config)));
            measure("PostgreSQL", SqlDialect.POSTGRESQL, harness.servers.pool("once"));
        }
    }

    private void measure(String database, SqlDialect dialect, DataSource target) {
        CountingDataSource counted = new CountingDataSource(target);
        DataSourceTransactionManager transactions = new DataSourceTransactionManager(counted);
        JdbcOnceStore store = new JdbcOnceStore(counted, transactions);
        store.createSchema();
        JdbcTemplate jdbc = new JdbcTemplate(counted);
        jdbc.execute("CREATE TABLE IF NOT EXISTS once_cost_effect (id BIGINT PRIMARY KEY, at TIMESTAMP)");
        TransactionTemplate template = new TransactionTemplate(transactions);
        String run = Long.toString(System.nanoTime(), 36);
        String keyInsert = dialect.insertUnlessPresent(JdbcOnceStore.TABLE, "once_key, done_at, token",
                "?, " + dialect.now() + ", ?", "once_key", "?");
        Runnable effect = () -> jdbc.update("INSERT INTO once_cost_effect (id, at) VALUES (?, CURRENT_TIMESTAMP)",
                keys.incrementAndGet());
        List<Contender> contenders = List.of(
                new Contender("same transaction without @Once (" + database + ")", null, null,
                        () -> template.executeWithoutResult(status -> effect.run())),
                // What the goal allows: the key's insert, as JdbcOnceStore writes it, and nothing else.
                new Contender("same transaction + the key's INSERT alone (" + database + ")", null, null,
                        () -> template.executeWithoutResult(status -> {
                            jdbc.update(keyInsert, keyArgs("once-cost-" + run + "-" + keys.get(), dialect));
                            effect.run();
                        })),
                new Contender("@Once transaction (" + database + ")", null, null, () -> {
                    try {
                        if (!store.runOnce("once-cost-" + run + "-" + keys.get(), Optional.empty(),
                                Duration.ofSeconds(5), effect::run)) {
                            throw new IllegalStateException("a fresh key was found committed");
                        }
                    }
                    catch (RuntimeException | Error ex) {
                        throw ex;
                    }
                    catch (Throwable ex) {
                        throw new IllegalStateException(ex);
                    }
                }));
        Map<Contender, Stats> time = new LinkedHashMap<>();
        Map<Contender, Stats> trips = new LinkedHashMap<>();
        contenders.forEach(c -> {
            time.put(c, new Stats());
            trips.put(c, new Stats());
        });
        // A few thousand transactions even in a smoke run: fewer say nothing on a loaded machine.
        int batch = settings.smoke() ? 100 : 1_000;
        for (Contender c : contenders) {
            for (int i = 0; i < batch * 3; i++) {
                c.leasedOp().run();
            }
        }
        for (int round = 0; round < settings.rounds(); round++) {
            for (int k = 0; k < contenders.size(); k++) {
                Contender c = contenders.get((k + round) % contenders.size());
                long trips0 = counted.roundTrips();
                long begin = System.nanoTime();
                for (int i = 0; i < batch; i++) {
                    c.leasedOp().run();
                }
                time.get(c).add((System.nanoTime() - begin) / 1000.0 / batch);
                trips.get(c).add((counted.roundTrips() - trips0) / (double) batch);
            }
        }
        String section = "@Once transaction cost (" + database + ")";
        harness.addRows(section, "µs per transaction (one insert + commit)", contenders, time, Map.of());
        harness.addRows(section, "round trips per transaction (statements + commit)", contenders, trips, Map.of());
    }

    private static Object[] keyArgs(String key, SqlDialect dialect) {
        SqlParameterValue token = new SqlParameterValue(Types.BIGINT, null);
        return dialect.insertBindsKeyAgain() ? new Object[] {key, token, key} : new Object[] {key, token};
    }
}
