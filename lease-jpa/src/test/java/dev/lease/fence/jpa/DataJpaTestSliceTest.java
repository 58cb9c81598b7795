package dev.lease.fence.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.data.jpa.test.autoconfigure.DataJpaTest;
import org.springframework.context.annotation.Import;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.jpa.app.Billing;
import dev.lease.fence.jpa.app.FencedApp;
import dev.lease.fence.jpa.app.Invoice;
import dev.lease.fence.jpa.app.InvoiceStates;
import dev.lease.fence.jpa.app.Invoices;

/**
 * Issue 44: a leased service imported into a {@code @DataJpaTest} gets its leases and its {@code @FenceColumn} fence
 * with no auto-configuration imported by hand (the starter registers its own for the JDBC and JPA slices).
 */
@DataJpaTest(properties = "lease.backend=in-memory")
@ContextConfiguration(classes = FencedApp.class)
@Import({Billing.class, InvoiceStates.class})
@Transactional(propagation = Propagation.NOT_SUPPORTED) // the leased methods commit as in production
class DataJpaTestSliceTest {

    @Autowired
    private Billing billing;

    @Autowired
    private Invoices invoices;

    @Autowired
    private LeaseTemplate leases;

    @Test
    void aLeasedServiceWritesAFencedEntityAndAnOlderTokenIsRefused() {
        leases.execute(LeaseSpec.of("invoice-31", LeaseKind.CORRECTNESS),
                lease -> invoices.saveAndFlush(new Invoice(31, "OPEN", 10)));
        billing.bill(31);

        Invoice billed = invoices.findById(31L).orElseThrow();
        assertThat(billed.getState()).isEqualTo("BILLED");
        assertThat(billed.getFence()).isPositive();
        try (FixedTokens older = FixedTokens.of(1)) {
            assertThatThrownBy(() -> older.run(() -> {
                Invoice stale = invoices.findById(31L).orElseThrow();
                stale.setState("OPEN");
                invoices.saveAndFlush(stale);
            })).satisfies(refused -> assertThat(NestedExceptionUtils.getMostSpecificCause(refused))
                    .isInstanceOf(StaleTokenException.class));
        }
        assertThat(invoices.findById(31L).orElseThrow().getState()).isEqualTo("BILLED");
    }
}
