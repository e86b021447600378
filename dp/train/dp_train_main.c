/* dp_train_main.c — the standalone `dp_train` program: `ringsim train` without the simulator. */
#include "rs_train.h"

int main(int argc, char **argv)
{
    return rs_train_main(argc, argv, NULL);
}
