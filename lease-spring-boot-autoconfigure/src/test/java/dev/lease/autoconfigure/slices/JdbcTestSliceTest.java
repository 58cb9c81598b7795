package dev.lease.autoconfigure.slices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.jdbc.test.autoconfigure.JdbcTest;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.ContextConfiguration;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;

/**
 * Issue 44: a leased service imported into a {@code @JdbcTest} gets its leases and its fence with no auto-configuration
 * imported by hand: the starter registers its own for the slice ({@code AutoConfigureJdbc.imports}), and the JDBC
 * backend serves the slice's embedded database.
 */
@JdbcTest
@ContextConfiguration(classes = JdbcTestSliceTest.Slice.class)
class JdbcTestSliceTest {

    @Autowired
    private Billing billing;

    @Autowired
    private JdbcFence fence;

    @Autowired
    private JdbcTemplate jdbc;

    @Test
    void aLeasedServiceIsFencedAtGrantAndTheFenceRefusesAnOlderToken() {
        FencingToken first = billing.bill(7);
        FencingToken second = billing.bill(7);

        assertThat(second.isNewerThan(first)).isTrue();
        assertThat(jdbc.queryForObject("SELECT fence FROM lease_fence WHERE resource = 'invoice-7'", Long.class))
                .isEqualTo(second.value());
        assertThatThrownBy(() -> fence.advance("invoice-7", first)).isInstanceOf(StaleTokenException.class);
    }

    @Configuration(proxyBeanMethods = false)
    @Import(Billing.class)
    static class Slice {
    }

    static class Billing {

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, fence = "invoice-#{#id}")
        public FencingToken bill(long id) {
            return LeaseContext.token();
        }
    }
}
