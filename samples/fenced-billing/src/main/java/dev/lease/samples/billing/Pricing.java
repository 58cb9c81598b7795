package dev.lease.samples.billing;

import java.time.Duration;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/** Stands for the slow part of billing, such as a call to a tax or pricing service. */
@Component
public class Pricing {

    private final Duration delay;

    Pricing(@Value("${billing.pricing-delay:200ms}") Duration delay) {
        this.delay = delay;
    }

    /** The amount to charge; takes {@code billing.pricing-delay}, and stops at once when the thread is interrupted. */
    public long price(Invoice invoice) throws InterruptedException {
        Thread.sleep(delay.toMillis());
        return invoice.amountCents();
    }
}
