/* Not fio's: run-fio-tests.py reads the features of the fio under test
 * from config-host.h in the fio root (-r). iolab has the libaio engine
 * (without the libaio library) and no zoned block devices. */
#define CONFIG_LIBAIO
