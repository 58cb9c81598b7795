package dev.lease.samples.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.samples.leader.ReminderEvent.Kind;
import dev.lease.testing.TestLeases;

/**
 * The job on its own, without Spring Boot: in-memory leases stand for the election's terms (lease-test's
 * {@link TestLeases} binds them to the thread as the {@code @LeaderOnly} advice does), on a fresh H2 database.
 */
class ReminderJobTest {

    private static final LeaseSpec TERM = LeaseSpec.of(Reminders.JOB, LeaseKind.CORRECTNESS);

    private final TestLeases leases = TestLeases.inMemory();
    private final JdbcTemplate jdbc = new JdbcTemplate(new DriverManagerDataSource(
            "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", ""));
    private final Reminders reminders = new Reminders(jdbc, new JdbcFence(jdbc));
    private final List<ReminderEvent> events = new CopyOnWriteArrayList<>();

    ReminderJobTest() {
        new ResourceDatabasePopulator(new ClassPathResource("schema.sql")).execute(jdbc.getDataSource());
    }

    @AfterEach
    void closeLeases() {
        leases.close();
        jdbc.execute("SHUTDOWN");
    }

    @Test
    void eachRunWritesTheNextBatchWithItsTermsToken() {
        ReminderJob job = job(event -> { });

        long first = leases.execute(TERM, term -> job.sendReminders().orElseThrow());
        long second = leases.execute(TERM, term -> job.sendReminders().orElseThrow());

        assertThat(List.of(first, second)).containsExactly(1L, 2L);
        List<Reminders.Message> outbox = reminders.outbox();
        assertThat(outbox).extracting(Reminders.Message::batch).containsExactly(1L, 2L);
        assertThat(outbox.get(1).token()).as("a later term's token").isGreaterThan(outbox.get(0).token());
        assertThat(events).extracting(ReminderEvent::kind)
                .containsExactly(Kind.PREPARES, Kind.WROTE, Kind.PREPARES, Kind.WROTE);
    }

    @Test
    void aFormerTermsWriteIsRefusedOnceALaterTermFencedTheJobAndWritesNothing() {
        // While this run prepares its batch, a later term starts elsewhere and fences the job's row at its grant.
        ReminderJob job = job(event -> {
            if (event.kind() == Kind.PREPARES) {
                reminders.fenceAtGrant(new FencingToken(Reminders.JOB, event.token() + 1));
            }
        });

        assertThatExceptionOfType(StaleTokenException.class)
                .isThrownBy(() -> leases.execute(TERM, term -> job.sendReminders()))
                .satisfies(ex -> assertThat(ex.current()).isEqualTo(ex.presented().value() + 1));
        assertThat(reminders.outbox()).isEmpty();
        assertThat(reminders.lastBatch()).isZero();
        assertThat(events).extracting(ReminderEvent::kind).containsExactly(Kind.PREPARES, Kind.REFUSED);
    }

    private ReminderJob job(Consumer<ReminderEvent> whilePublishing) {
        return new ReminderJob(reminders, event -> {
            ReminderEvent published = (ReminderEvent) event;
            events.add(published);
            whilePublishing.accept(published);
        }, "T", Duration.ZERO);
    }
}
