package dev.lease.samples.payments.service;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The payments service: it pays invoices for whoever calls, and refuses a call whose {@code Fencing-Token} is older
 * than one it already accepted for that invoice. Its configuration is {@code payments.yml}.
 */
@SpringBootApplication
public class PaymentsApplication {

    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(PaymentsApplication.class);
        app.setDefaultProperties(java.util.Map.of("spring.config.name", "payments"));
        app.run(args);
    }
}
