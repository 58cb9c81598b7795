package dev.lease.autoconfigure.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.fence.StaleTokenException;
import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.Leased;
import dev.lease.autoconfigure.JdbcFenceAutoConfiguration;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.fence.JdbcFence;

/**
 * Fence at grant through the application's beans on H2: {@code @Leased(fence = ...)} and
 * {@code LeaseTemplate.execute} with {@code LeaseSpec.withFence}. The advance is committed on its own before the work
 * starts, whatever transaction the caller or the method is in.
 */
class FenceAtGrantTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class,
                    JdbcFenceAutoConfiguration.class))
            .withPropertyValues("lease.backend=in-memory")
            .withUserConfiguration(Application.class);

    @Test
    void theAdvanceAtGrantIsCommittedBeforeTheMethodRunsAndOutlivesItsRollback() {
        runner.run(context -> {
            Invoices invoices = context.getBean(Invoices.class);
            TransactionTemplate callersTransaction = new TransactionTemplate(
                    context.getBean(PlatformTransactionManager.class));

            assertThatThrownBy(() -> callersTransaction.executeWithoutResult(status -> invoices.bill(7, true)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("after the write");

            long token = context.getBean(InMemoryLeaseBackend.class).lastToken("invoice-7").orElseThrow();
            assertThat(invoices.fenceSeenInside()).as("fence seen inside the method").isEqualTo(token);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            assertThat(jdbc.queryForObject("SELECT billed_with FROM invoice WHERE id = 7", Long.class))
                    .as("the method's write rolled back").isNull();
            assertThat(context.getBean(JdbcFence.class).current("invoice-7")).as("fence after the rollback")
                    .hasValue(token);
        });
    }

    @Test
    void theTemplateFencesAtGrantLikeTheAnnotation() {
        runner.run(context -> {
            InMemoryLeaseBackend backend = context.getBean(InMemoryLeaseBackend.class);
            Invoices invoices = context.getBean(Invoices.class);
            invoices.bill(8, false);
            assertThat(invoices.fenceSeenInside()).isEqualTo(backend.lastToken("invoice-8").orElseThrow());

            Long seen = context.getBean(LeaseTemplate.class).execute(
                    LeaseSpec.of("invoice-8", LeaseKind.CORRECTNESS).withFence("invoice-8"),
                    lease -> invoices.fenceSeenFromAnotherConnection("invoice-8"));
            assertThat(seen).isEqualTo(backend.lastToken("invoice-8").orElseThrow())
                    .isGreaterThan(invoices.fenceSeenInside());
        });
    }

    @Test
    void aFenceThatAcceptedANewerTokenKeepsTheWorkFromRunningWhetherAnnotatedOrProgrammatic() {
        runner.run(context -> {
            JdbcFence fence = context.getBean(JdbcFence.class);
            // Newer than any token the in-memory backend will issue (they are seeded from the wall clock).
            long newer = Long.MAX_VALUE;
            new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(
                    status -> fence.advance("invoice-9", new FencingToken("invoice-9", newer)));
            Invoices invoices = context.getBean(Invoices.class);
            AtomicBoolean templateWorkRan = new AtomicBoolean();

            assertThatThrownBy(() -> invoices.bill(9, false)).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("invoice-9")
                    .cause().isInstanceOfSatisfying(StaleTokenException.class,
                            stale -> assertThat(stale.current()).isEqualTo(newer));
            assertThatThrownBy(() -> context.getBean(LeaseTemplate.class).execute(
                    LeaseSpec.of("invoice-9", LeaseKind.CORRECTNESS).withFence("invoice-9"),
                    lease -> templateWorkRan.getAndSet(true)))
                    .isInstanceOf(LeaseLostException.class).hasMessageContaining("invoice-9")
                    .cause().isInstanceOfSatisfying(StaleTokenException.class,
                            stale -> assertThat(stale.current()).isEqualTo(newer));

            assertThat(invoices.calls()).as("annotated method ran").isZero();
            assertThat(templateWorkRan).as("template work ran").isFalse();
            assertThat(fence.current("invoice-9")).hasValue(newer);
        });
    }

    /**
     * The quick-start shape, re-entered: a fenced @Transactional method that advanced its fence calls another method
     * leased on the same name. Fence at grant again, in a transaction of its own, waited for the row lock of the
     * transaction it suspended: H2's lock timeout then cost the holder its valid lease (PostgreSQL waits for ever).
     */
    @Test
    void aFencedTransactionalMethodThatReentersItsLeaseCompletesWithoutFencingAgain() {
        runner.run(context -> {
            Billing billing = context.getBean(Billing.class);
            JdbcFence fence = context.getBean(JdbcFence.class);

            long token = billing.billAndRecord(8);

            assertThat(token).isEqualTo(context.getBean(InMemoryLeaseBackend.class).lastToken("invoice-8").orElseThrow());
            assertThat(context.getBean(JdbcTemplate.class).queryForObject(
                    "SELECT billed_with FROM invoice WHERE id = 8", Long.class)).isEqualTo(token);
            assertThat(fence.current("invoice-8")).hasValue(token);
        });
    }

    static class Billing {

        private final JdbcFence fence;
        private final JdbcTemplate jdbc;
        private final Ledger ledger;

        Billing(JdbcFence fence, JdbcTemplate jdbc, Ledger ledger) {
            this.fence = fence;
            this.jdbc = jdbc;
            this.ledger = ledger;
        }

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, fence = "invoice-#{#id}")
        @Transactional
        public long billAndRecord(long id) {
            FencingToken token = LeaseContext.token();
            fence.advance("invoice-" + id, token);
            jdbc.update("UPDATE invoice SET billed_with = ? WHERE id = ?", token.value(), id);
            ledger.record(id);
            return token.value();
        }
    }

    static class Ledger {

        private final JdbcFence fence;

        Ledger(JdbcFence fence) {
            this.fence = fence;
        }

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, fence = "invoice-#{#id}")
        @Transactional
        public void record(long id) {
            fence.advance("invoice-" + id, LeaseContext.token());
        }
    }

    static class Invoices {

        private final JdbcTemplate jdbc;
        private final DataSource dataSource;
        private final AtomicInteger calls = new AtomicInteger();
        private volatile Long fenceSeenInside;

        Invoices(JdbcTemplate jdbc, DataSource dataSource) {
            this.jdbc = jdbc;
            this.dataSource = dataSource;
        }

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, fence = "invoice-#{#id}")
        @Transactional
        public void bill(long id, boolean failAfterWriting) {
            calls.incrementAndGet();
            fenceSeenInside = fenceSeenFromAnotherConnection("invoice-" + id);
            jdbc.update("UPDATE invoice SET billed_with = ? WHERE id = ?", LeaseContext.token().value(), id);
            if (failAfterWriting) {
                throw new IllegalStateException("billing failed after the write");
            }
        }

        // Read through methods: the bean is a proxy, whose own fields are not the target's.
        public int calls() {
            return calls.get();
        }

        public Long fenceSeenInside() {
            return fenceSeenInside;
        }

        /** What a connection outside this thread's transaction sees: only what was committed. */
        public Long fenceSeenFromAnotherConnection(String resource) {
            try (Connection connection = dataSource.getConnection();
                    PreparedStatement read = connection.prepareStatement(
                            "SELECT fence FROM " + JdbcFence.TABLE + " WHERE resource = ?")) {
                read.setString(1, resource);
                try (ResultSet row = read.executeQuery()) {
                    return row.next() ? row.getLong(1) : null;
                }
            }
            catch (SQLException ex) {
                throw new IllegalStateException(ex);
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Application {

        @Bean
        DataSource dataSource() {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL("jdbc:h2:mem:fence-at-grant-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
            h2.setUser("sa");
            new JdbcFence(new JdbcTemplate(h2)).createSchema();
            new JdbcTemplate(h2).execute("CREATE TABLE invoice (id BIGINT PRIMARY KEY, billed_with BIGINT)");
            new JdbcTemplate(h2).execute("INSERT INTO invoice (id) VALUES (7), (8), (9)");
            return h2;
        }

        @Bean
        JdbcTemplate jdbcTemplate(DataSource dataSource) {
            return new JdbcTemplate(dataSource);
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        Invoices invoices(JdbcTemplate jdbc, DataSource dataSource) {
            return new Invoices(jdbc, dataSource);
        }

        @Bean
        Ledger ledger(JdbcFence fence) {
            return new Ledger(fence);
        }

        @Bean
        Billing billing(JdbcFence fence, JdbcTemplate jdbc, Ledger ledger) {
            return new Billing(fence, jdbc, ledger);
        }
    }
}
