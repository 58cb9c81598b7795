package dev.lease.samples.reactive;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A WebFlux billing service: each invoice is billed under its own CORRECTNESS lease, fenced in PostgreSQL. */
@SpringBootApplication
public class ReactiveBillingApplication {

    public static void main(String[] args) {
        SpringApplication.run(ReactiveBillingApplication.class, args);
    }
}
