package dev.lease.testing;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;

class TestLeasesTest {

    private static final LeaseSpec IMPORT = LeaseSpec.of("import", LeaseKind.CORRECTNESS);

    @Test
    void losingALeaseInterruptsItsHolderAtOnce() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (TestLeases leases = TestLeases.inMemory()) {
            BlockingWork work = new BlockingWork();
            Future<String> running = pool.submit(() -> leases.execute(IMPORT, work));
            assertThat(work.awaitStarted(seconds(10))).isTrue();

            assertThat(leases.lose("import")).as("someone held it").isTrue();

            assertThatThrownBy(() -> running.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("revoked");
            assertThat(work.wasInterrupted()).isTrue();
            assertThat(leases.lose("import")).as("nobody holds it any more").isFalse();
        }
        finally {
            pool.shutdownNow();
        }
    }

    @Test
    void sectionsGetIncreasingTokensThatLastTokenReports() {
        try (TestLeases leases = TestLeases.inMemory()) {
            long first = leases.execute(IMPORT, lease -> lease.token().value());
            long second = leases.execute(IMPORT, lease -> lease.token().value());
            assertThat(second).isGreaterThan(first);
            assertThat(leases.lastToken("import")).hasValue(second);
        }
    }

    @Test
    void leaseAssertSeesTheLeasesOfThisThreadOnly() {
        assertThatThrownBy(() -> LeaseAssert.assertLeased("import")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("expected to run under lease 'import', but this thread holds no lease at all");
        assertThatThrownBy(LeaseAssert::assertLeased).isInstanceOf(AssertionError.class);
        try (TestLeases leases = TestLeases.inMemory()) {
            Lease seen = leases.execute(IMPORT, lease -> {
                assertThat(LeaseAssert.assertLeased()).isSameAs(lease);
                assertThatThrownBy(() -> LeaseAssert.assertLeased("export")).isInstanceOf(AssertionError.class)
                        .hasMessageContaining("holds only");
                LeaseAssert.assertNotLeased("export");
                return LeaseAssert.assertLeased("import");
            });
            assertThat(seen.name()).isEqualTo("import");
            LeaseAssert.assertNotLeased("import");
        }
    }
}
