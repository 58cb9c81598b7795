package dev.lease.benchmarks;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.fence.jpa.FenceColumn;
import dev.lease.fence.jpa.UnfencedWrites;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.PostgresServer;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;

/**
 * What {@link FenceColumn} costs: one transaction that loads an entity and changes it by dirty checking, on
 * PostgreSQL through Hibernate and HikariCP, for an entity without a fence and for the same entity with one (inside
 * a leased section, whose acquire is not timed). Rounds alternate the two; the result is the median of the rounds'
 * averages, their ratio, and the statements (+ commits) each transaction sent.
 *
 * <pre>{@code
 * ./mvnw -q -Pbench -pl benchmarks -am package -DskipTests
 * java -cp benchmarks/target/benchmarks.jar dev.lease.benchmarks.JpaFenceBenchmark
 * }</pre>
 */
public final class JpaFenceBenchmark {

    private static final int WARM_UP = 2_000;
    private static final int ROUNDS = 15;
    private static final int PER_ROUND = 400;

    /** The entity without a fence. */
    @Entity(name = "PlainAccount")
    static class PlainAccount {
        @Id
        long id;
        long balance;
    }

    /** The same with a fence column. */
    @Entity(name = "FencedAccount")
    static class FencedAccount {
        @Id
        long id;
        long balance;
        @FenceColumn
        long fence;
    }

    private JpaFenceBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        try (PostgresServer postgres = PostgresServer.start()) {
            HikariConfig pool = new HikariConfig();
            pool.setJdbcUrl(postgres.jdbcUrl());
            pool.setMaximumPoolSize(4);
            try (HikariDataSource hikari = new HikariDataSource(pool)) {
                CountingDataSource counting = new CountingDataSource(hikari);
                run(counting);
            }
        }
        System.exit(0);
    }

    private static void run(CountingDataSource counting) throws Exception {
        try (SessionFactory factory = sessionFactory(counting); LeaseEngine engine = engine()) {
            factory.inTransaction(session -> {
                PlainAccount plain = new PlainAccount();
                plain.id = 1;
                session.persist(plain);
            });
            UnfencedWrites.run("benchmark setup", () -> factory.inTransaction(session -> {
                FencedAccount fenced = new FencedAccount();
                fenced.id = 1;
                session.persist(fenced);
            }));
            Consumer<Session> plainUpdate = session -> session.find(PlainAccount.class, 1L).balance++;
            Consumer<Session> fencedUpdate = session -> session.find(FencedAccount.class, 1L).balance++;
            engine.execute(LeaseSpec.of("jpa-fence-benchmark", LeaseKind.CORRECTNESS), lease -> {
                times(factory, plainUpdate, WARM_UP);
                times(factory, fencedUpdate, WARM_UP);
                List<Double> plain = new ArrayList<>();
                List<Double> fenced = new ArrayList<>();
                for (int round = 0; round < ROUNDS; round++) {
                    if (round % 2 == 0) {
                        plain.add(times(factory, plainUpdate, PER_ROUND));
                        fenced.add(times(factory, fencedUpdate, PER_ROUND));
                    }
                    else {
                        fenced.add(times(factory, fencedUpdate, PER_ROUND));
                        plain.add(times(factory, plainUpdate, PER_ROUND));
                    }
                }
                double plainStatements = statements(counting, factory, plainUpdate);
                double fencedStatements = statements(counting, factory, fencedUpdate);
                double p = median(plain);
                double f = median(fenced);
                System.out.printf("| entity update in one transaction | median µs/tx | statements + commit per tx |%n");
                System.out.printf("|---|---:|---:|%n");
                System.out.printf("| without @FenceColumn | %.0f | %.1f |%n", p, plainStatements);
                System.out.printf("| with @FenceColumn (inside a leased section) | %.0f | %.1f |%n", f, fencedStatements);
                System.out.printf("%nratio fenced / unfenced: %.2f× (%d rounds of %d transactions, medians)%n", f / p,
                        ROUNDS, PER_ROUND);
                return null;
            });
        }
    }

    private static double times(SessionFactory factory, Consumer<Session> update, int count) {
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            factory.inTransaction(update);
        }
        return (System.nanoTime() - start) / 1_000.0 / count;
    }

    private static double statements(CountingDataSource counting, SessionFactory factory, Consumer<Session> update) {
        long before = counting.roundTrips();
        times(factory, update, 100);
        return (counting.roundTrips() - before) / 100.0;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        return sorted.get(sorted.size() / 2);
    }

    private static SessionFactory sessionFactory(DataSource dataSource) {
        Configuration configuration = new Configuration().addAnnotatedClass(PlainAccount.class)
                .addAnnotatedClass(FencedAccount.class).setProperty("hibernate.hbm2ddl.auto", "create-drop");
        configuration.getProperties().put("hibernate.connection.datasource", dataSource);
        return configuration.buildSessionFactory();
    }

    private static LeaseEngine engine() {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, new InMemoryLeaseBackend());
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }
}
