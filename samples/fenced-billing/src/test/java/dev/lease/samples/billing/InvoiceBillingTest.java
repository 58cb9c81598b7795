package dev.lease.samples.billing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.fence.StaleTokenException;

/** The billing service on the embedded ZooKeeper and H2 of the default profile. */
@SpringBootTest(properties = "billing.instance=test")
class InvoiceBillingTest {

    @Autowired
    InvoiceBilling billing;

    @Autowired
    Invoices invoices;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void billsAnInvoiceOnceAndRecordsTheTokenItWroteWith() throws Exception {
        long id = invoices.open("Initech", 9_900);

        assertThat(billing.bill(id)).isTrue();
        assertThat(billing.bill(id)).as("billed already: nothing to do").isFalse();

        Invoice invoice = invoices.find(id);
        assertThat(invoice.isBilled()).isTrue();
        assertThat(invoice.fence()).isPositive();
        assertThat(invoices.charges(id)).singleElement()
                .isEqualTo(new Invoices.Charge(id, 9_900, "test", invoice.fence()));
    }

    @Test
    void theInvoiceRefusesAWriteWithAnOlderTokenAndChargesNothing() {
        long id = invoices.open("Umbrella", 1_000);
        long later = Long.MAX_VALUE / 2;
        jdbc.update("UPDATE invoice SET fence = ?, billed_by = 'later holder' WHERE id = ?", later, id);

        assertThatExceptionOfType(StaleTokenException.class).isThrownBy(() -> billing.bill(id))
                .satisfies(ex -> assertThat(ex.current()).isEqualTo(later))
                .satisfies(ex -> assertThat(ex.resource()).isEqualTo("Invoice#" + id));
        assertThat(invoices.charges(id)).as("the charge rolled back with the invoice").isEmpty();
        assertThat(invoices.find(id).billedBy()).isEqualTo("later holder");
    }

    @Test
    void writingAnInvoiceOutsideALeasedSectionIsRefused() {
        long id = invoices.open("Hooli", 500);
        // A @Repository: Spring translates the IllegalStateException, keeping its message.
        assertThatThrownBy(() -> invoices.recordBilling(id, 500, "no lease")).hasMessageContaining("LeaseContext");
        assertThat(invoices.find(id).status()).isEqualTo("OPEN");
    }
}
