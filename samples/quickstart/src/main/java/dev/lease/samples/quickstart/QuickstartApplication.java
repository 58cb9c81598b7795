package dev.lease.samples.quickstart;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** Runs {@link Demo} once and exits. */
@SpringBootApplication
public class QuickstartApplication {

    public static void main(String[] args) {
        System.exit(SpringApplication.exit(SpringApplication.run(QuickstartApplication.class, args)));
    }
}
